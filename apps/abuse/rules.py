"""The abuse rule table: Appwrite's per-route rate limits, in one place.

Source: Appwrite 1.9.6 ``app/controllers/shared/api.php`` (how a rule is applied: key
placeholders, ``X-RateLimit-*`` headers, exemptions, ``abuse-reset``) and the ``abuse-limit`` /
``abuse-time`` / ``abuse-key`` labels on each route (``app/controllers/api/account.php``, the
``Databases``/``TablesDB``/``Storage`` modules). Limits are requests per window; windows are
seconds. An endpoint opts in by naming a rule: ``Endpoint(..., abuse="account.create")``.

Rule names (limit / window, counter key, fail mode when the key-value store is down):

=========================== ============ ===================================== ======
name                        limit/window key parts                             fail
=========================== ============ ===================================== ======
account.create              10 / 3600 s  url, ip                               open
account.session.email       10 / 3600 s  url, email (cleared by a 201)         closed
account.session.anonymous   50 / 3600 s  ip                                    open
account.session.update      10 / 3600 s  url, ip                               open
account.sessions.delete     100 / 3600 s url, ip                               open
account.jwt                 120 / 60 s   url, userId                           open
account.password            10 / 3600 s  url, ip                               closed
account.email               10 / 3600 s  url, userId                           closed
account.session.token       10 / 3600 s  ip, param.userId; param.userId        closed
                                         (cleared by a 201)
account.oauth2              50 / 3600 s  url, ip                               open
account.verification        10 / 3600 s  url, userId                           open
account.verification.update 10 / 3600 s  url, param.userId                     closed
account.verification.phone  10 / 3600 s  url, userId; url, ip                  open
account.verification.phone.update 10/3600 s  param.userId                     closed
account.recovery            10 / 3600 s  url, email; url, ip                   open
account.recovery.update     10 / 3600 s  url, param.userId                     closed
account.token.magic-url     60 / 3600 s  url, email; url, ip                   open
account.token.email         10 / 3600 s  url, email; url, ip                   open
account.token.phone         10 / 3600 s  url, param.phone; url, ip             open
account.mfa.challenge       10 / 3600 s  url, userId                           open
account.mfa.challenge.update 10 / 3600 s url, param.challengeId                closed
rows.create                 120 / 60 s   ip, method, url, userId               open
rows.update                 120 / 60 s   ip, method, url, userId               open
rows.upsert                 120 / 60 s   ip, method, url, userId               open
rows.delete                 60 / 60 s    ip, method, url, userId               open
documents.create            120 / 60 s   ip, method, url, userId               open
documents.update            120 / 60 s   ip, method, url, userId               open
documents.upsert            120 / 60 s   ip, method, url, userId               open
documents.delete            60 / 60 s    ip, method, url, userId               open
files.create                60 / 60 s    ip, method, url, userId, chunkId      open
files.delete                60 / 60 s    ip, method, url, userId               open
tokens.create               60 / 60 s    ip, method, url, userId               open
tokens.update               60 / 60 s    ip, method, url, userId               open
teams.membership.create     10 / 3600 s  url, ip                               open
executions.create           0 (off)      ip, userId                            open
admin.login                 10 / 900 s   ip; param.username                    closed
=========================== ============ ===================================== ======

Beyond Appwrite's table: ``account.email`` (Appwrite's route checks the password with no limit)
and the second counter of ``account.session.token``, one budget per user whatever the IP, so
guessing a 6-digit code from many addresses gets no more tries than from one. See
docs/security-accounts.md.

``executions.create`` (``POST /v1/functions/{functionId}/executions``) is off by default, as in
Appwrite 1.4 and later, which dropped the route's label: an application that executes functions
often must not start getting 429 here after moving from Appwrite. ``ABUSE_LIMITS`` with
``{"executions.create": 60}`` turns on Appwrite 1.0-1.3's rule (``abuse-key``
``ip:{ip},userId:{userId}``, per 60 s). No ``url`` part, so one budget covers every function of
the project.

``admin.login`` is this project's own (Appwrite has no Django admin): it guards the staff sign-in
at ``/admin/login/`` and counts *failed* sign-ins only (``apps.adminsite.throttle``), one counter
per client IP and one per username (trimmed, lower-cased); a good sign-in clears its username's
counter. Its counters are scoped to ``_admin`` instead of a project.

Key parts: ``url`` = ``/v1`` + the endpoint's route pattern (``/v1/account/sessions/{sessionId}``,
so one budget covers every id; Appwrite also prepends the Host header, which a client controls,
so we leave it out), ``ip`` = the client IP (trusted-proxy aware), ``userId`` = the signed-in
user's id (empty for guests and keys), ``method`` = the HTTP method, ``email`` = the ``email``
parameter, trimmed and lower-cased, ``chunkId`` = the upload chunk index from ``Content-Range``
(``start // 5 MiB``, 0 without the header), ``param.<name>`` = the request parameter ``<name>``
(Appwrite's ``{param-<name>}``, e.g. ``param.userId``; ``param.username`` is the admin sign-in
form's username). Every counter is also scoped to the project,
as Appwrite keeps its counters in each project's database.

Overrides (``backend/settings/security.py``): ``ABUSE_LIMIT_MULTIPLIER`` scales every default limit;
``ABUSE_LIMITS`` (JSON) sets ``limit`` / ``window`` / ``fail`` per rule name and wins over the
multiplier. A limit of 0 turns a rule off (no counting, no headers), as in Appwrite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache

URL, IP, USER_ID, METHOD, EMAIL, CHUNK_ID = "url", "ip", "userId", "method", "email", "chunkId"
PARAM_USER_ID, PARAM_PHONE, PARAM_CHALLENGE_ID = "param.userId", "param.phone", "param.challengeId"
PARAM_USERNAME = "param.username"
KEY_PARTS = frozenset({URL, IP, USER_ID, METHOD, EMAIL, CHUNK_ID, PARAM_USER_ID, PARAM_PHONE, PARAM_CHALLENGE_ID,
                       PARAM_USERNAME})


@dataclass(frozen=True, slots=True)
class Rule:
    """One rate limit.

    ``limit`` requests per ``window`` seconds (0 = unlimited) for each counter; ``keys`` lists the
    counters, each a tuple of key parts (Appwrite allows several ``abuse-key`` labels; the
    tightest one is reported). ``reset_on`` holds response statuses that clear the counters
    (Appwrite's ``abuse-reset``). ``fail_closed`` refuses the request (503) when the counters
    cannot be reached; otherwise it is let through. ``routes`` are the routes the rule is
    written for (documentation; the ``url`` part comes from the endpoint that names the rule).
    """

    name: str
    limit: int
    window: int
    keys: tuple[tuple[str, ...], ...]
    routes: tuple[str, ...]
    reset_on: frozenset[int] = frozenset()
    fail_closed: bool = False


_HOUR, _MINUTE = 3600, 60
_ROWS = "/v1/tablesdb/{databaseId}/tables/{tableId}/rows"
_DOCS = "/v1/databases/{databaseId}/collections/{collectionId}/documents"
_FILES = "/v1/storage/buckets/{bucketId}/files"
_WRITE_KEY = ((IP, METHOD, URL, USER_ID),)


def _table() -> list[Rule]:
    account = [
        Rule("account.create", 10, _HOUR, ((URL, IP),), ("POST /v1/account",)),
        # Password guessing: one budget per target email whatever the IP; a good login clears it.
        Rule("account.session.email", 10, _HOUR, ((URL, EMAIL),),
             ("POST /v1/account/sessions/email",), reset_on=frozenset({201}), fail_closed=True),
        Rule("account.session.anonymous", 50, _HOUR, ((IP,),), ("POST /v1/account/sessions/anonymous",)),
        Rule("account.session.update", 10, _HOUR, ((URL, IP),), ("PATCH /v1/account/sessions/{sessionId}",)),
        Rule("account.sessions.delete", 100, _HOUR, ((URL, IP),),
             ("DELETE /v1/account/sessions", "DELETE /v1/account/sessions/{sessionId}")),
        Rule("account.jwt", 120, _MINUTE, ((URL, USER_ID),), ("POST /v1/account/jwts",)),
        # Checks the old password: a guessing oracle for whoever holds a stolen session.
        Rule("account.password", 10, _HOUR, ((URL, IP),), ("PATCH /v1/account/password",), fail_closed=True),
        # Checks the password before a new address is set: the same oracle as account.password,
        # counted per signed-in user (this server's rule; Appwrite has none here).
        Rule("account.email", 10, _HOUR, ((URL, USER_ID),), ("PATCH /v1/account/email",), fail_closed=True),
        # Guessing a token or a 6-digit code for one user: per IP (Appwrite's key) and per user
        # across every IP and route (ours: a botnet gets no more guesses than one address); a good
        # exchange clears both.
        Rule("account.session.token", 10, _HOUR, ((IP, PARAM_USER_ID), (PARAM_USER_ID,)),
             ("POST /v1/account/sessions/token", "PUT /v1/account/sessions/magic-url",
              "PUT /v1/account/sessions/phone"), reset_on=frozenset({201}), fail_closed=True),
        # Mailing links and codes: each mail costs the project, and floods a mailbox.
        Rule("account.verification", 10, _HOUR, ((URL, USER_ID),), ("POST /v1/account/verifications/email",)),
        Rule("account.verification.phone", 10, _HOUR, ((URL, USER_ID), (URL, IP)),
             ("POST /v1/account/verifications/phone",)),
        Rule("account.recovery", 10, _HOUR, ((URL, EMAIL), (URL, IP)), ("POST /v1/account/recovery",)),
        Rule("account.token.magic-url", 60, _HOUR, ((URL, EMAIL), (URL, IP)), ("POST /v1/account/tokens/magic-url",)),
        Rule("account.token.email", 10, _HOUR, ((URL, EMAIL), (URL, IP)), ("POST /v1/account/tokens/email",)),
        Rule("account.token.phone", 10, _HOUR, ((URL, PARAM_PHONE), (URL, IP)), ("POST /v1/account/tokens/phone",)),
        Rule("account.mfa.challenge", 10, _HOUR, ((URL, USER_ID),), ("POST /v1/account/mfa/challenges",)),
        # Guessing a secret or a code: fail closed, like the token exchange.
        Rule("account.verification.update", 10, _HOUR, ((URL, PARAM_USER_ID),),
             ("PUT /v1/account/verifications/email",), fail_closed=True),
        Rule("account.verification.phone.update", 10, _HOUR, ((PARAM_USER_ID,),),
             ("PUT /v1/account/verifications/phone",), fail_closed=True),
        Rule("account.recovery.update", 10, _HOUR, ((URL, PARAM_USER_ID),), ("PUT /v1/account/recovery",),
             fail_closed=True),
        Rule("account.mfa.challenge.update", 10, _HOUR, ((URL, PARAM_CHALLENGE_ID),),
             ("PUT /v1/account/mfa/challenges",), fail_closed=True),
        Rule("account.oauth2", 50, _HOUR, ((URL, IP),),
             ("GET /v1/account/sessions/oauth2/{provider}", "GET /v1/account/tokens/oauth2/{provider}",
              "GET /v1/account/sessions/oauth2/{provider}/redirect")),
    ]
    data = []
    for family, base, item in (("rows", _ROWS, "{rowId}"), ("documents", _DOCS, "{documentId}")):
        data += [
            Rule(f"{family}.create", 120, _MINUTE, _WRITE_KEY, (f"POST {base}",)),
            Rule(f"{family}.update", 120, _MINUTE, _WRITE_KEY, (f"PATCH {base}/{item}", f"PATCH {base}")),
            Rule(f"{family}.upsert", 120, _MINUTE, _WRITE_KEY, (f"PUT {base}/{item}", f"PUT {base}")),
            Rule(f"{family}.delete", 60, _MINUTE, _WRITE_KEY, (f"DELETE {base}/{item}", f"DELETE {base}")),
        ]
    files = [
        Rule("files.create", 60, _MINUTE, ((IP, METHOD, URL, USER_ID, CHUNK_ID),), (f"POST {_FILES}",)),
        Rule("files.delete", 60, _MINUTE, _WRITE_KEY, (f"DELETE {_FILES}/{{fileId}}",)),
    ]
    tokens = [
        Rule("tokens.create", 60, _MINUTE, _WRITE_KEY, ("POST /v1/tokens/buckets/{bucketId}/files/{fileId}",)),
        Rule("tokens.update", 60, _MINUTE, _WRITE_KEY, ("PATCH /v1/tokens/{tokenId}",)),
    ]
    teams = [
        # Invitations mail whoever they name: Appwrite's route default key (url, ip).
        Rule("teams.membership.create", 10, _HOUR, ((URL, IP),), ("POST /v1/teams/{teamId}/memberships",)),
    ]
    admin = [
        # Guessing a staff password at the Django admin: failed sign-ins per client IP and per
        # username (apps/adminsite/throttle.py); fail closed like the API's password routes.
        Rule("admin.login", 10, 15 * _MINUTE, ((IP,), (PARAM_USERNAME,)), ("POST /admin/login/",),
             fail_closed=True),
    ]
    functions = [
        # Off (Appwrite 1.4+ has no limit here); a limit set in ABUSE_LIMITS counts as Appwrite
        # 1.0-1.3's label did: per client IP and user, across every function.
        Rule("executions.create", 0, _MINUTE, ((IP, USER_ID),), ("POST /v1/functions/{functionId}/executions",)),
    ]
    return account + data + files + tokens + teams + functions + admin


DEFAULT_RULES: dict[str, Rule] = {rule.name: rule for rule in _table()}


def apply_overrides(defaults: dict[str, Rule], multiplier: float, overrides: dict[str, dict]) -> dict[str, Rule]:
    """``defaults`` with every limit times ``multiplier`` (rounded up, at least 1; 0 stays 0),
    then the per-rule ``overrides`` (``{name: {"limit"?, "window"?, "fail"?}}``) taken as given.

    Raises ``KeyError`` naming an override for a rule that does not exist.
    """
    unknown = sorted(set(overrides) - set(defaults))
    if unknown:
        raise KeyError(f"unknown abuse rule(s) {unknown}; known: {sorted(defaults)}")
    out = {}
    for name, rule in defaults.items():
        if multiplier != 1.0 and rule.limit:
            rule = replace(rule, limit=max(1, math.ceil(rule.limit * multiplier)))
        o = overrides.get(name)
        if o:
            rule = replace(
                rule,
                limit=o.get("limit", rule.limit),
                window=o.get("window", rule.window),
                fail_closed=o["fail"] == "closed" if "fail" in o else rule.fail_closed,
            )
        out[name] = rule
    return out


@cache
def active_rules() -> dict[str, Rule]:
    """The table in force: :data:`DEFAULT_RULES` with the settings' overrides (built once)."""
    from django.conf import settings

    return apply_overrides(DEFAULT_RULES, settings.ABUSE_LIMIT_MULTIPLIER, settings.ABUSE_LIMITS)


def rule_get(name: str) -> Rule:
    """The active rule called ``name``; raises ``KeyError`` for an unknown name."""
    return active_rules()[name]
