"""deploy/k8s: the manifests parse, reference each other consistently, and the ConfigMap plus the
example Secret make a valid production configuration for backend/settings/."""

from __future__ import annotations

import subprocess
import sys

import yaml

from tests.deploy.support import ROOT

K8S = ROOT / "deploy" / "k8s"


def _docs() -> dict[tuple[str, str], dict]:
    found = {}
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            assert doc["apiVersion"] and doc["metadata"]["name"], path
            found[(doc["kind"], doc["metadata"]["name"])] = doc
    return found


DOCS = _docs()


def test_kustomization_lists_every_manifest_but_the_example_secret():
    kust = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    files = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml", "secret.example.yaml"}
    assert set(kust["resources"]) == files


def test_expected_objects():
    assert set(DOCS) == {("ConfigMap", "appwrite-config"), ("Secret", "appwrite-secrets"),
                         ("PersistentVolumeClaim", "appwrite-files"), ("Job", "appwrite-migrate"),
                         ("Deployment", "appwrite-api"), ("Deployment", "appwrite-worker"),
                         ("Service", "appwrite-api")}


def _env_from(container) -> set[tuple[str, str]]:
    return {(kind, ref["name"]) for item in container["envFrom"] for kind, ref in item.items()}


def test_deployment():
    dep = DOCS[("Deployment", "appwrite-api")]
    pod = dep["spec"]["template"]["spec"]
    (api,) = pod["containers"]
    assert api["command"] == ["python", "-m", "backend.serve"]
    assert _env_from(api) == {("configMapRef", "appwrite-config"), ("secretRef", "appwrite-secrets")}
    assert api["ports"] == [{"name": "http", "containerPort": 8000}]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        # The Host header must be one of ALLOWED_HOSTS: a probe's default Host (the pod IP) is refused.
        assert api[probe]["httpGet"] == {"path": "/v1/health/version", "port": "http",
                                         "httpHeaders": [{"name": "Host", "value": "api.example.com"}]}
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert dep["spec"]["selector"]["matchLabels"].items() <= dep["spec"]["template"]["metadata"]["labels"].items()
    grace = int(DOCS[("ConfigMap", "appwrite-config")]["data"]["SERVER_GRACEFUL_TIMEOUT"])
    assert pod["terminationGracePeriodSeconds"] > grace + 5  # preStop sleep 5 + drain
    mounts = {m["mountPath"]: m["name"] for m in api["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes[mounts["/data/files"]]["persistentVolumeClaim"]["claimName"] == "appwrite-files"


def test_worker_deployment():
    dep = DOCS[("Deployment", "appwrite-worker")]
    pod = dep["spec"]["template"]["spec"]
    (worker,) = pod["containers"]
    assert worker["command"] == ["python", "manage.py", "worker"]
    assert _env_from(worker) == {("configMapRef", "appwrite-config"), ("secretRef", "appwrite-secrets")}
    assert "ports" not in worker  # it serves nothing
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["terminationGracePeriodSeconds"] >= 2 * 15 + 10  # an SMTP send (SMTP_TIMEOUT) can finish
    assert dep["spec"]["selector"]["matchLabels"].items() <= dep["spec"]["template"]["metadata"]["labels"].items()
    api_labels = DOCS[("Service", "appwrite-api")]["spec"]["selector"]
    assert not api_labels.items() <= dep["spec"]["template"]["metadata"]["labels"].items(), "the API Service must not route to workers"
    mounts = {m["mountPath"]: m["name"] for m in worker["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes[mounts["/data/files"]]["persistentVolumeClaim"]["claimName"] == "appwrite-files"


def test_config_sends_mail_through_smtp():
    env = DOCS[("ConfigMap", "appwrite-config")]["data"]
    assert env["SMTP_HOST"] and env["SMTP_SECURE"] in ("tls", "ssl")


def test_service_selects_the_api_pods():
    svc = DOCS[("Service", "appwrite-api")]
    labels = DOCS[("Deployment", "appwrite-api")]["spec"]["template"]["metadata"]["labels"]
    assert svc["spec"]["selector"].items() <= labels.items()
    assert svc["spec"]["ports"][0]["targetPort"] == "http"


def test_migrate_job():
    job = DOCS[("Job", "appwrite-migrate")]
    (c,) = job["spec"]["template"]["spec"]["containers"]
    assert c["command"] == ["python", "manage.py", "migrate", "--noinput"]
    assert _env_from(c) == {("configMapRef", "appwrite-config"), ("secretRef", "appwrite-secrets")}
    assert job["spec"]["template"]["spec"]["restartPolicy"] in ("OnFailure", "Never")


def test_config_and_secret_make_valid_production_settings():
    env = dict(DOCS[("ConfigMap", "appwrite-config")]["data"])
    secret = DOCS[("Secret", "appwrite-secrets")]["stringData"]
    assert set(secret) == {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "SMTP_USERNAME", "SMTP_PASSWORD"}
    assert not set(secret) & set(env), "secrets must not be in the ConfigMap"
    env.update(secret)
    # The example Secret ships a placeholder key, which production settings refuse (tested
    # below); the operator puts a generated one there.
    env["SECRET_KEY"] = "k" * 64
    code = "import django; from django.conf import settings; django.setup(); assert settings.PRODUCTION"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env=dict(env, DJANGO_SETTINGS_MODULE="backend.settings", PATH="/usr/bin:/bin"))
    assert out.returncode == 0, out.stderr


def test_example_secret_key_is_refused_in_production():
    env = dict(DOCS[("ConfigMap", "appwrite-config")]["data"], **DOCS[("Secret", "appwrite-secrets")]["stringData"])
    code = "import django; django.setup()"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env=dict(env, DJANGO_SETTINGS_MODULE="backend.settings", PATH="/usr/bin:/bin"))
    assert out.returncode != 0 and "placeholder" in out.stderr
