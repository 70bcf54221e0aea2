"""The account routes (contract §3): one declaration per endpoint."""

from apps.accounts.api import account, identities, sessions
from apps.accounts.api import inputs as i
from apps.core.http.endpoint import Endpoint

S = "/account/sessions/{sessionId}"

endpoints = [
    Endpoint("POST", "/account", account.account_create, "account.create", scope="sessions.write",
             input=i.AccountCreate, abuse="account.create", status=201, response="user"),
    Endpoint("GET", "/account", account.account_get, "account.get", scope="account", input=i.Empty,
             response="user"),
    Endpoint("POST", "/account/sessions/email", sessions.session_create_email,
             "account.createEmailPasswordSession", scope="sessions.write", input=i.EmailSessionCreate,
             abuse="account.session.email", session_forbidden=True, status=201, response="session",
             aliases=("/account/sessions",)),
    Endpoint("POST", "/account/sessions/anonymous", sessions.session_create_anonymous,
             "account.createAnonymousSession", scope="sessions.write", input=i.Empty,
             abuse="account.session.anonymous", session_forbidden=True, status=201, response="session"),
    Endpoint("POST", "/account/sessions/token", sessions.session_create_token, "account.createSession",
             scope="sessions.write", input=i.TokenSessionCreate, abuse="account.session.token",
             session_forbidden=True, status=201, response="session"),
    Endpoint("GET", "/account/sessions", sessions.sessions_list, "account.listSessions", scope="account",
             input=i.SessionsList, response="sessionList"),
    Endpoint("DELETE", "/account/sessions", sessions.sessions_delete, "account.deleteSessions",
             scope="account", input=i.SessionsDelete, abuse="account.sessions.delete", status=204),
    Endpoint("GET", S, sessions.session_get, "account.getSession", scope="account", input=i.SessionRef,
             response="session"),
    Endpoint("PATCH", S, sessions.session_update, "account.updateSession", scope="account",
             input=i.SessionRef, abuse="account.session.update", response="session"),
    Endpoint("DELETE", S, sessions.session_delete, "account.deleteSession", scope="account",
             input=i.SessionRef, abuse="account.sessions.delete", status=204),
    Endpoint("POST", "/account/jwts", sessions.jwt_create, "account.createJWT", scope="account",
             input=i.JwtCreate, abuse="account.jwt", status=201, response="jwt",
             aliases=("/account/jwt",)),
    Endpoint("PATCH", "/account/name", account.account_update_name, "account.updateName", scope="account",
             input=i.NameUpdate, response="user"),
    Endpoint("PATCH", "/account/password", account.account_update_password, "account.updatePassword",
             scope="account", input=i.PasswordUpdate, abuse="account.password", response="user"),
    Endpoint("PATCH", "/account/email", account.account_update_email, "account.updateEmail",
             scope="account", input=i.EmailUpdate, response="user"),
    Endpoint("GET", "/account/prefs", account.account_get_prefs, "account.getPrefs", scope="account",
             input=i.Empty, response="preferences"),
    Endpoint("PATCH", "/account/prefs", account.account_update_prefs, "account.updatePrefs",
             scope="account", input=i.PrefsUpdate, response="user"),
    Endpoint("PATCH", "/account/status", account.account_update_status, "account.updateStatus",
             scope="account", input=i.Empty, response="user"),
    # Identities: provider accounts linked by OAuth2 sign-ins.
    Endpoint("GET", "/account/identities", identities.account_identities_list, "account.listIdentities",
             scope="account", input=identities.IdentitiesList, response="identityList"),
    Endpoint("DELETE", "/account/identities/{identityId}", identities.account_identity_delete,
             "account.deleteIdentity", scope="account", input=identities.IdentityRef, status=204),
    Endpoint("GET", "/users/identities", identities.users_identities_list, "users.listIdentities",
             scope="users.read", input=identities.UsersIdentitiesList, response="identityList"),
    Endpoint("DELETE", "/users/identities/{identityId}", identities.users_identity_delete,
             "users.deleteIdentity", scope="users.write", input=identities.IdentityRef, status=204),
]
