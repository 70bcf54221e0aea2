"""Appwrite response models of the Messaging service: Provider, Topic, Subscriber, Target,
Message."""

from __future__ import annotations

from apps.core.domain.timefmt import iso
from apps.core.drivers.db import as_bool, as_dt, as_json
from apps.messaging import crypto
from apps.messaging.catalog import KINDS, public_credentials


def _meta(row: dict) -> dict:
    return {"$id": row["uid"], "$createdAt": iso(as_dt(row["created_at"])),
            "$updatedAt": iso(as_dt(row["updated_at"]))}


def credentials_of(row: dict) -> dict:
    """The provider row's decrypted credentials (raises ``crypto.CredentialsUnreadable``)."""
    return crypto.unseal(row["credentials"], bound_to=f"{row['project_id']}/{row['uid']}")


def provider_model(row: dict) -> dict:
    """``{$id, $createdAt, $updatedAt, name, provider, enabled, type, credentials, options}``;
    ``credentials`` without its secret keys (passwords, API keys, tokens, private keys)."""
    kind = KINDS[row["provider"]]
    try:
        creds = public_credentials(kind, credentials_of(row))
    except crypto.CredentialsUnreadable:
        creds = {}
    return {**_meta(row), "name": row["name"], "provider": row["provider"], "enabled": as_bool(row["enabled"]),
            "type": row["provider_type"], "credentials": creds, "options": as_json(row["options"]) or {}}


def target_model(row: dict) -> dict:
    """``{$id, ..., name, userId, providerId, providerType, identifier, expired}``."""
    return {**_meta(row), "name": row["name"], "userId": row["user_uid"], "providerId": row.get("provider_uid") or None,
            "providerType": row["provider_type"], "identifier": row["identifier"], "expired": as_bool(row["expired"])}


def topic_model(row: dict) -> dict:
    """``{$id, ..., name, description, emailTotal, smsTotal, pushTotal, subscribe}``."""
    return {**_meta(row), "name": row["name"], "description": row["description"],
            "emailTotal": int(row.get("email_total") or 0), "smsTotal": int(row.get("sms_total") or 0),
            "pushTotal": int(row.get("push_total") or 0), "subscribe": as_json(row["subscribe"]) or []}


def subscriber_model(row: dict) -> dict:
    """``{$id, ..., targetId, target, userId, userName, topicId, providerType}``."""
    target = {"uid": row["target_uid"], "created_at": row["target_created_at"],
              "updated_at": row["target_updated_at"], "name": row["target_name"], "user_uid": row["user_uid"],
              "provider_uid": row["provider_uid"], "provider_type": row["provider_type"],
              "identifier": row["identifier"], "expired": row["expired"]}
    return {**_meta(row), "targetId": row["target_uid"], "target": target_model(target), "userId": row["user_uid"],
            "userName": row["user_name"] or "", "topicId": row["topic_uid"], "providerType": row["provider_type"]}


def message_model(row: dict) -> dict:
    """``{$id, ..., providerType, topics, users, targets, scheduledAt, deliveredAt,
    deliveryErrors, deliveredTotal, data, status}``."""
    return {**_meta(row), "providerType": row["provider_type"], "topics": as_json(row["topics"]) or [],
            "users": as_json(row["users"]) or [], "targets": as_json(row["targets"]) or [],
            "scheduledAt": iso(as_dt(row["scheduled_at"])) if row["scheduled_at"] else None,
            "deliveredAt": iso(as_dt(row["delivered_at"])) if row["delivered_at"] else None,
            "deliveryErrors": as_json(row["delivery_errors"]) or [],
            "deliveredTotal": int(row["delivered_total"] or 0), "data": as_json(row["data"]) or {},
            "status": row["status"]}
