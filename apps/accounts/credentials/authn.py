"""Resolving the caller's credential. Set as ``V1_AUTHENTICATOR``.

Order: API key (``X-Appwrite-Key``) -> JWT (``X-Appwrite-JWT``) -> cookie
``a_session_<project>`` -> cookie ``a_session_<project>_legacy`` -> ``X-Appwrite-Session`` ->
``X-Fallback-Cookies``. A malformed, unknown or expired session token leaves the caller a guest,
as Appwrite does; a bad key or JWT is an error.
"""

from __future__ import annotations

import time

import orjson

from apps.accounts.credentials.tokens import decode_jwt, decode_session_token
from apps.accounts.selectors import accounts as selectors
from apps.core.drivers import cache
from apps.core.drivers.db import as_bool, as_dt, as_json, now
from apps.core.errors import AppwriteError
from apps.core.http.auth import KEY_BASE_SCOPES, USER_SCOPES, Auth, team_tag, user_roles
from apps.projects.selectors import api_key_get, key_tag
from apps.projects.services import hash_secret

# A session of a user with the ``impersonator`` flag also reads users (Appwrite grants
# ``users.read`` so that an impersonator can find a target).
IMPERSONATOR_SCOPES = USER_SCOPES | {"users.read"}


def session_cookie_name(project_uid: str) -> str:
    """``a_session_<projectId>``, lower-cased like Appwrite's ``Response::addCookie``."""
    return f"a_session_{project_uid}".lower()


def parse_cookies(header: str) -> dict[str, str]:
    """A ``Cookie`` header as a dict; malformed pairs are skipped (never an error)."""
    out: dict[str, str] = {}
    for part in header.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name:
            out.setdefault(name.strip(), value.strip().strip('"'))
    return out


def _session_token(ctx, cookies: dict[str, str]) -> str:
    name = session_cookie_name(ctx.project_id)
    for candidate in (cookies.get(name), cookies.get(name + "_legacy"), ctx.headers.get("x-appwrite-session")):
        if candidate:
            return candidate
    fallback = ctx.headers.get("x-fallback-cookies", "")
    if fallback:
        try:
            data = orjson.loads(fallback)
        except orjson.JSONDecodeError:
            return ""
        if isinstance(data, dict) and isinstance(data.get(name), str):
            return data[name]
    return ""


def _user_auth(kind: str, row: dict) -> Auth:
    user = {k: v for k, v in row.items() if not k.startswith("s_") and k != "memberships"}
    verified = as_bool(user["email_verification"]) or as_bool(user["phone_verification"])
    labels = as_json(user["labels"]) or []
    return Auth(
        kind=kind,
        user=user,
        session={"id": row["s_id"], "uid": row["s_uid"], "expire": as_dt(row["s_expire"]),
                 "factors": as_json(row["s_factors"]) or [], "mfa_updated_at": as_dt(row["s_mfa_updated_at"])},
        scopes=USER_SCOPES,
        roles=user_roles(user["uid"], verified=verified, labels=labels,
                         memberships=as_json(row.get("memberships")) or ()),
    )


# (project id, secret hash) -> the API key row. Dropped in every process by ``key_tag(key id)``
# when the key is saved or deleted through the ORM (apps.projects.apps: admin, services).
_keys = cache.LocalCache("keys")


async def _api_key(ctx, secret_hash: str) -> dict | None:
    return await _keys.fetch((ctx.project["id"], secret_hash),
                             lambda: api_key_get(ctx, ctx.project["id"], secret_hash),
                             lambda key: (key_tag(key["id"]),))


async def _key_auth(ctx, secret: str) -> Auth:
    if secret.startswith("dynamic_"):  # an execution's short-lived key (apps.functions.keys)
        from apps.core.http.auth import KEY_SCOPES
        from apps.functions.keys import read_key

        claims = read_key(secret, project_uid=ctx.project_id)
        if claims is None:
            raise AppwriteError("user_unauthorized", "The API key is invalid or has expired.")
        scopes = frozenset(claims["scopes"]) & KEY_SCOPES
        return Auth(kind="key", key={"id": 0, "uid": "dynamic", "name": "dynamic", "scopes": sorted(scopes),
                                     "expire": None}, scopes=scopes | KEY_BASE_SCOPES, roles=[])
    key = await _api_key(ctx, hash_secret(secret))
    if key is None:
        raise AppwriteError("user_unauthorized", "The API key is invalid.")
    if key["expire"] is not None and key["expire"] <= now():
        raise AppwriteError("project_key_expired")
    await _touch_key(ctx, key)
    return Auth(kind="key", key=key, scopes=frozenset(key["scopes"]) | KEY_BASE_SCOPES, roles=[])


_TOUCH_EVERY = 3600  # seconds
_touched: dict[int, float] = {}  # key id -> monotonic time this process last checked the stamp


async def _touch_key(ctx, key: dict) -> None:
    # Appwrite records accessedAt at most about once an hour per key; so do we (no write per
    # request, and no Redis read per request: each process checks the shared stamp hourly).
    stamp = f"key-accessed:{key['id']}"
    moment = time.monotonic()
    if moment - _touched.get(key["id"], -_TOUCH_EVERY) < _TOUCH_EVERY:
        return
    _touched[key["id"]] = moment
    try:
        if await ctx.kv.get(stamp) is None:
            await ctx.kv.set(stamp, b"1", ttl=_TOUCH_EVERY)
            await ctx.db.execute(
                "UPDATE projects_apikey SET accessed_at = %s WHERE id = %s", (ctx.db.dt(now()), key["id"])
            )
    except Exception:  # bookkeeping only: never fail a request over it
        pass


async def authenticate(ctx) -> Auth:
    """The :class:`Auth` for ``ctx`` (project already resolved).

    Raises 401 ``user_unauthorized`` (unknown API key), 401 ``project_key_expired``,
    403 ``user_api_key_and_session_set``, 401 ``user_jwt_invalid`` (bad signature, expired, made
    in another project, or naming no live session), 403
    ``user_jwt_and_cookie_set``, 403 ``user_blocked`` for a blocked user's session, 401
    ``user_more_factors_required`` for a session that has not completed its MFA challenge.
    """
    headers = ctx.headers
    key = headers.get("x-appwrite-key")
    if key:
        if headers.get("x-appwrite-session") or headers.get("x-appwrite-jwt"):
            raise AppwriteError("user_api_key_and_session_set")
        return await _key_auth(ctx, key)

    cookies = parse_cookies(headers.get("cookie", ""))
    jwt_token = headers.get("x-appwrite-jwt")
    if jwt_token:
        name = session_cookie_name(ctx.project_id)
        if cookies.get(name) or cookies.get(name + "_legacy"):
            raise AppwriteError("user_jwt_and_cookie_set")
        claims = decode_jwt(jwt_token, project_uid=ctx.project_id)
        # A JWT acts for one session: one that names none (``POST /users/{userId}/jwts`` for a
        # user without sessions) or whose session has ended is refused like a forged one.
        if claims is None or not claims["sessionId"]:
            raise AppwriteError("user_jwt_invalid")
        row = await selectors.session_with_user_by_uid(
            ctx, project_id=ctx.project["id"], user_uid=claims["userId"], session_uid=claims["sessionId"]
        )
        if row is None or as_dt(row["s_expire"]) <= now():
            raise AppwriteError("user_jwt_invalid")
        auth = _checked(ctx, _user_auth("jwt", row))
        return await _impersonation(ctx, auth) if auth.user["impersonator"] else auth

    token = _session_token(ctx, cookies)
    decoded = decode_session_token(token) if token else None
    if decoded is None:
        return Auth()
    user_uid, secret = decoded
    row = await _session_row(ctx, hash_secret(secret))
    if row is None or row["uid"] != user_uid or as_dt(row["s_expire"]) <= now():
        return Auth()
    auth = _checked(ctx, _user_auth("session", row))
    return await _impersonation(ctx, auth) if auth.user["impersonator"] else auth


# (project id, session secret hash) -> the session joined with its user and the user's confirmed
# memberships. Dropped in every process by ``user_tag(user id)`` (apps.accounts.services.accounts: user
# updates, session deletes and creates; apps.teams.services: every membership change).
_sessions = cache.LocalCache("sessions")


async def _session_row(ctx, secret_hash: str) -> dict | None:
    return await _sessions.fetch(
        (ctx.project["id"], secret_hash),
        lambda: selectors.session_with_user_get(ctx, project_id=ctx.project["id"], secret_hash=secret_hash),
        lambda row: _session_tags(ctx.project["id"], row))


def _session_tags(project_id: int, row: dict) -> tuple[str, ...]:
    """A cached session is dropped when its user changes (memberships included) and when one of
    the teams it holds a role of is deleted."""
    teams = as_json(row.get("memberships")) or ()
    return (selectors.user_tag(row["id"]), *(team_tag(project_id, team) for team, _, _ in teams))


# Impersonation (Appwrite 1.9): a user with the ``impersonator`` flag names a target user of the
# project by header, or by query parameter where a URL cannot carry headers (file views, avatars).
_IMPERSONATE = (
    ("id", "x-appwrite-impersonate-user-id", ("impersonateuserid", "impersonateUserId")),
    ("email", "x-appwrite-impersonate-user-email", ("impersonateemail", "impersonateEmail")),
    ("phone", "x-appwrite-impersonate-user-phone", ("impersonatephone", "impersonatePhone")),
)
# Account routes that act on the impersonator's own session even while impersonating (Appwrite:
# the MFA challenge, signing out, and a JWT for the session making the request).
_OWN_SESSION_ROUTES = frozenset({"account.createMfaChallenge", "account.updateMfaChallenge",
                                 "account.deleteSession", "account.createJWT"})
# Account reads refused while impersonating: they would hand the target's credentials over.
_CREDENTIAL_READS = frozenset({"account.getMfaRecoveryCodes"})
# Account routes that change the account although their method is GET: OAuth2 sign-in starts
# (which link the provider to the signed-in user) and the provider's return, which creates a
# session or token for that user.
_GET_WRITES = frozenset({"account.createOAuth2Session", "account.createOAuth2Token", "account.getOAuth2Callback",
                         "account.getOAuth2Redirect"})
# Users reads an impersonator's ``users.read`` does not reach (credentials: API keys only).
_KEY_ONLY_READS = frozenset({"users.getMfaRecoveryCodes"})


def _impersonation_target(ctx) -> tuple[str, str] | None:
    """``(by, value)`` of the first impersonation header or query parameter sent, or ``None``."""
    headers = ctx.headers
    query = None
    for by, header, names in _IMPERSONATE:
        value = headers.get(header, "")
        if not value:
            if query is None:
                query = {name: value for name, value in ctx.query if value}
            value = next((query[name] for name in names if name in query), "")
        if value:
            return by, (value.lower() if by == "email" else value)
    return None


async def _impersonation(ctx, auth: Auth) -> Auth:
    """``auth`` (of a user with the ``impersonator`` flag) as the target user, if it names one.

    Without the flag the headers are ignored; an unknown target leaves the request the
    impersonator's own (both as Appwrite does). An impersonator holds ``users.read`` (to find a
    target) with or without a target. While impersonating, ``user``, ``roles`` and ``scopes`` are
    the target's and the target's account is read-only: any account route other than a read
    raises 403 ``user_impersonation_read_only`` (so do the credential reads and the OAuth2 ``GET``
    routes, :data:`_CREDENTIAL_READS`, :data:`_GET_WRITES`), except those in
    :data:`_OWN_SESSION_ROUTES`, which run as the impersonator. A session still waiting for its
    second factor (on an MFA-exempt route) does not impersonate; :data:`_KEY_ONLY_READS` answer
    401 ``general_unauthorized_scope`` to an impersonator.
    """
    user = auth.user
    if user is None or not as_bool(user["impersonator"]):
        return auth
    endpoint = ctx.endpoint
    name = endpoint.name if endpoint is not None else ""
    if more_factors_required(auth):  # an MFA-exempt route of a session still waiting for a factor
        return auth
    if name in _KEY_ONLY_READS:
        raise AppwriteError("general_unauthorized_scope", "An impersonator's users.read does not reach users' "
                            "credentials (MFA recovery codes); an API key does.")
    auth.scopes = IMPERSONATOR_SCOPES
    wanted = _impersonation_target(ctx)
    if wanted is None or name in _OWN_SESSION_ROUTES or (name == "account.getSession"
                                                          and ctx.path_params.get("sessionId") == "current"):
        return auth
    row = await selectors.user_with_memberships_by(ctx, project_id=ctx.project["id"], by=wanted[0], value=wanted[1])
    if row is None:
        return auth
    if name.startswith("account.") and (endpoint.method != "GET" or name in _CREDENTIAL_READS or name in _GET_WRITES):
        raise AppwriteError("user_impersonation_read_only")
    target = {k: v for k, v in row.items() if k != "memberships"}
    verified = as_bool(target["email_verification"]) or as_bool(target["phone_verification"])
    return Auth(kind=auth.kind, user=target, session=auth.session, scopes=IMPERSONATOR_SCOPES,
                roles=user_roles(target["uid"], verified=verified, labels=as_json(target["labels"]) or [],
                                 memberships=as_json(row.get("memberships")) or ()),
                impersonator=user)


def _checked(ctx, auth: Auth) -> Auth:
    if not as_bool(auth.user["status"]):
        raise AppwriteError("user_blocked")
    _mfa_gate(ctx, auth)
    return auth


# The routes a session still waiting for its second factor may call (Appwrite's route group
# "mfa"): complete a challenge, see the factors, sign out.
MFA_EXEMPT = frozenset({"account.createMfaChallenge", "account.updateMfaChallenge", "account.listMfaFactors",
                        "account.deleteSession"})


def factors_required(user: dict) -> int:
    """How many factors a session of ``user`` needs (Appwrite: 2 when MFA is on and the user has
    a verified email, phone or TOTP authenticator; else 1)."""
    more = (as_bool(user["email_verification"]) or as_bool(user["phone_verification"])
            or as_bool(user["mfa_totp_verified"]))
    return 2 if as_bool(user["mfa"]) and more else 1


def more_factors_required(auth: Auth) -> bool:
    """Whether ``auth`` is a session (or its JWT) with fewer factors than its user needs (while
    impersonating: the impersonator, whose session it is). Reads only the already loaded rows:
    users without MFA cost one boolean test."""
    user = auth.actor
    return (user is not None and auth.session is not None and as_bool(user["mfa"])
            and len(auth.session["factors"]) < factors_required(user))


def _mfa_gate(ctx, auth: Auth) -> None:
    """401 ``user_more_factors_required`` for a session (or its JWT) with fewer factors than the
    user needs, except on :data:`MFA_EXEMPT` routes and outside HTTP routes (realtime sockets
    apply their own rule: ``apps.realtime.handshake.resolve_auth``)."""
    if ctx.endpoint is None or ctx.endpoint.name in MFA_EXEMPT:
        return
    if more_factors_required(auth):
        raise AppwriteError("user_more_factors_required")
