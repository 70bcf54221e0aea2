"""Appwrite response models of the Functions service: Function, Deployment, Execution, Variable."""

from __future__ import annotations

from apps.core.domain.timefmt import iso
from apps.core.drivers.db import as_bool, as_dt, as_json


def _ts(value) -> str:
    return iso(as_dt(value)) if value else ""


def variable_model(row: dict) -> dict:
    """A secret variable's ``value`` is always ``""`` (write-only, as in Appwrite)."""
    secret = as_bool(row["secret"])
    return {
        "$id": row["uid"], "$createdAt": _ts(row["created_at"]), "$updatedAt": _ts(row["updated_at"]),
        "key": row["key"], "description": row.get("description") or "",
        "value": "" if secret else row["value"], "secret": secret,
        "resourceType": "function" if row.get("function_uid") else "project",
        "resourceId": row.get("function_uid") or "",
    }


def function_model(row: dict, variables: list[dict] | None = None) -> dict:
    """``row`` may carry the active deployment's ``dep_uid``/``dep_created_at`` and the latest
    deployment's ``latest_uid``/``latest_created_at``/``latest_status`` (selectors join them)."""
    from apps.functions.runtimes import DEFAULT_SPECIFICATION

    spec = row.get("specification") or DEFAULT_SPECIFICATION
    return {
        "$id": row["uid"], "$createdAt": _ts(row["created_at"]), "$updatedAt": _ts(row["updated_at"]),
        "execute": as_json(row["execute"]) or [], "name": row["name"], "description": row.get("description") or "",
        "enabled": as_bool(row["enabled"]), "live": True, "logging": as_bool(row["logging"]),
        "runtime": row["runtime"], "deploymentRetention": int(row.get("deployment_retention") or 0),
        "deploymentId": row.get("dep_uid") or "", "deploymentCreatedAt": _ts(row.get("dep_created_at")),
        "latestDeploymentId": row.get("latest_uid") or "",
        "latestDeploymentCreatedAt": _ts(row.get("latest_created_at")),
        "latestDeploymentStatus": _status(row.get("latest_status") or ""),
        "scopes": as_json(row["scopes"]) or [], "vars": [variable_model(v) for v in variables or []],
        "events": as_json(row["events"]) or [], "schedule": row["schedule"] or "",
        "timeout": int(row["timeout"]), "entrypoint": row["entrypoint"] or "", "commands": row["commands"] or "",
        "version": "v5", "installationId": "", "providerRepositoryId": "", "providerBranch": "",
        "providerRootDirectory": "", "providerSilentMode": False, "providerBranches": [], "providerPaths": [],
        "specification": spec, "buildSpecification": spec, "runtimeSpecification": spec, "emailEnabled": False,
    }


def _status(status: str) -> str:
    return "waiting" if status == "uploading" else status


def deployment_model(row: dict, function_uid: str) -> dict:
    """A template deployment is Appwrite's type ``vcs`` with the template's repository in the
    ``provider*`` fields."""
    source, build = int(row["source_size"]), int(row["build_size"])
    template = as_json(row.get("template")) or {}
    provider = _provider(template) if template else {}
    return {
        "$id": row["uid"], "$createdAt": _ts(row["created_at"]), "$updatedAt": _ts(row["updated_at"]),
        "type": "vcs" if template else "manual", "resourceId": function_uid, "resourceType": "functions",
        "entrypoint": row["entrypoint"], "sourceSize": source, "buildSize": build, "totalSize": source + build,
        "buildId": row["uid"], "activate": as_bool(row["activate"]), "screenshotLight": "", "screenshotDark": "",
        "status": _status(row["status"]), "buildLogs": row["build_logs"] or "",
        "buildDuration": round(float(row["build_duration"] or 0)),
        "providerRepositoryName": "", "providerRepositoryOwner": "", "providerRepositoryUrl": "",
        "providerCommitHash": "", "providerCommitAuthorUrl": "", "providerCommitAuthor": "",
        "providerCommitMessage": "", "providerCommitUrl": "", "providerBranch": "", "providerBranchUrl": "",
        **provider,
        # chunked upload progress (the SDK's upload loop reads these)
        "chunksTotal": int(row["chunks_total"]), "chunksUploaded": int(row["chunks_uploaded"]),
    }


def _provider(template: dict) -> dict:
    from django.conf import settings

    repo = f"{settings.FUNCTIONS_TEMPLATE_SOURCE.rstrip('/')}/{template['owner']}/{template['repository']}"
    return {"providerRepositoryName": template["repository"], "providerRepositoryOwner": template["owner"],
            "providerRepositoryUrl": repo, "providerBranchUrl": f"{repo}/blob/{template['reference']}",
            "providerBranch": template["reference"] if template["type"] == "branch" else "",
            "providerCommitHash": template["reference"] if template["type"] == "commit" else ""}


def execution_model(row: dict, function_uid: str) -> dict:
    return {
        "$id": row["uid"], "$createdAt": _ts(row["created_at"]), "$updatedAt": _ts(row["updated_at"]),
        "$permissions": as_json(row["permissions"]) or [], "functionId": function_uid,
        "resourceId": function_uid, "resourceType": "functions", "deploymentId": row["deployment_uid"] or "",
        "trigger": row["trigger"], "status": row["status"], "requestMethod": row["request_method"],
        "requestPath": row["request_path"], "requestHeaders": as_json(row["request_headers"]) or [],
        "responseStatusCode": int(row["response_status_code"]), "responseBody": row["response_body"] or "",
        "responseHeaders": as_json(row["response_headers"]) or [], "logs": row["logs"] or "",
        "errors": row["errors"] or "", "duration": float(row["duration"] or 0),
        "scheduledAt": _ts(row["scheduled_at"]) or None,
    }
