"""Who a message goes to, and through which provider (run by the worker, Django's connection).

Recipients are the message's ``targets``, the targets of its ``users`` and of its ``topics``'
subscribers, of the message's channel, not expired, and an email's raw addresses (``emails``),
each identifier once. A user with no target of an email or SMS message's channel is reached at
the account's own email or phone, as Appwrite does through the targets it creates with an
account. A recipient goes through its target's
provider when that is enabled, else through the project's first enabled provider of the channel.
"""

from __future__ import annotations

from django.db import connection

_TARGETS = ("SELECT tg.uid, tg.identifier, pr.uid AS provider_uid, pr.enabled AS provider_enabled "
            "FROM messaging_target tg JOIN accounts_user u ON u.id = tg.user_id AND u.project_id = tg.project_id "
            "LEFT JOIN messaging_provider pr ON pr.id = tg.provider_id "
            "WHERE tg.project_id = %s AND tg.provider_type = %s AND NOT tg.expired AND ")


def _rows(sql: str, params) -> list[tuple]:
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def _in(values: list) -> str:
    return "(" + ", ".join(["%s"] * len(values)) + ")"


def default_provider(project_id: int, channel: str) -> str | None:
    """The project's first enabled provider of ``channel`` (public ID), or ``None``."""
    rows = _rows("SELECT uid FROM messaging_provider WHERE project_id = %s AND provider_type = %s AND enabled "
                 "ORDER BY id LIMIT 1", (project_id, channel))
    return rows[0][0] if rows else None


def recipients(message: dict) -> list[tuple[str, str, str]]:
    """``[(target uid or "", identifier, provider uid or "")]`` of the message."""
    project_id, channel = message["project_id"], message["provider_type"]
    found: list[tuple] = []
    if message["targets"]:
        found += _rows(_TARGETS + "tg.uid IN " + _in(message["targets"]),
                       (project_id, channel, *message["targets"]))
    if message["users"]:
        found += _rows(_TARGETS + "u.uid IN " + _in(message["users"]), (project_id, channel, *message["users"]))
        if channel in ("email", "sms"):
            column = "email" if channel == "email" else "phone"
            found += [("", ident, None, None) for (ident,) in _rows(
                f"SELECT u.{column} FROM accounts_user u WHERE u.project_id = %s AND u.uid IN {_in(message['users'])} "
                f"AND u.{column} <> '' AND NOT EXISTS (SELECT 1 FROM messaging_target t WHERE t.user_id = u.id "
                "AND t.provider_type = %s)", (project_id, *message["users"], channel))]
    if message["topics"]:
        found += _rows(_TARGETS + "tg.id IN (SELECT s.target_id FROM messaging_subscriber s JOIN messaging_topic tp "
                       "ON tp.id = s.topic_id WHERE tp.project_id = %s AND tp.uid IN " + _in(message["topics"]) + ")",
                       (project_id, channel, project_id, *message["topics"]))
    if channel == "email":  # raw addresses (``emails``), no target behind them
        found += [("", address, None, None) for address in (message["data"] or {}).get("emails") or []]
    default = default_provider(project_id, channel) or ""
    out, seen = [], set()
    for uid, identifier, provider_uid, provider_enabled in found:
        if identifier in seen:
            continue
        seen.add(identifier)
        out.append((uid or "", identifier, provider_uid if provider_uid and provider_enabled else default))
    return out
