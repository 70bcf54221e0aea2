"""The Health routes. Scope ``health.read`` (every API key holds it); ``/health/version`` is
public. Appwrite reserves ``/health/stats`` for its console's root scope; here an API key with
``health.read`` is the most privileged caller there is, so it reads the stats too."""

from typing import Any

from apps.core.http.endpoint import Endpoint
from apps.health import queues
from apps.health.api import probes, stats, status
from apps.health.api import queues as q

_S: dict[str, Any] = {"scope": "health.read"}
# A probe whose backing service fails answers 500 general_server_error, as Appwrite's do.
_P: dict[str, Any] = {**_S, "errors": (500,)}


def _queue_route(queue: str) -> Endpoint:
    name = "getQueue" + "".join(part.capitalize() for part in queue.split("-"))
    params = q.DatabaseQueueParams if queue == "databases" else q.QueueParams
    return Endpoint("GET", f"/health/queue/{queue}", q.queue_size(queue), f"health.{name}", input=params,
                    response="healthQueue", **_S)


endpoints = [
    Endpoint("GET", "/health", status.health, "health.get", response="healthStatus", **_S),
    Endpoint("GET", "/health/version", status.health_version, "health.getVersion", scope=None,
             response="healthVersion"),
    Endpoint("GET", "/health/db", status.health_db, "health.getDB", response="healthStatusList", **_P),
    Endpoint("GET", "/health/audits-db", status.health_audits_db, "health.getAuditsDB", response="healthStatusList",
             **_P),
    Endpoint("GET", "/health/cache", status.health_cache, "health.getCache", response="healthStatusList", **_P),
    Endpoint("GET", "/health/pubsub", status.health_pubsub, "health.getPubSub", response="healthStatusList", **_P),
    Endpoint("GET", "/health/time", probes.health_time, "health.getTime", response="healthTime", **_P),
    Endpoint("GET", "/health/certificate", probes.health_certificate, "health.getCertificate",
             input=probes.CertificateParams, response="healthCertificate", **_S),
    Endpoint("GET", "/health/anti-virus", probes.health_antivirus, "health.getAntivirus",
             response="healthAntivirus", **_P),
    Endpoint("GET", "/health/storage", probes.health_storage, "health.getStorage", response="healthStatus", **_P),
    Endpoint("GET", "/health/storage/local", probes.health_storage_local, "health.getStorageLocal",
             response="healthStatus", **_P),
    Endpoint("GET", "/health/stats", stats.health_stats, "health.getStats", response="healthStats", **_S),
    Endpoint("GET", "/health/queue/failed/{name}", q.queue_failed, "health.getFailedJobs",
             input=q.FailedParams, response="healthQueue", **_S),
    *[_queue_route(queue) for queue in queues.QUEUES],
]
