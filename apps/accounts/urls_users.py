"""The Users service routes (server side, API keys): one declaration per endpoint.

Not here: ``GET /users/{userId}/memberships`` (the teams app), ``GET /users/{userId}/logs`` (the
audit app); identities and MFA (``urls.py``). Messaging targets are not implemented
(docs/users-and-teams.md).
"""

from apps.accounts.api.manage import inputs as i
from apps.accounts.api.manage import users as u
from apps.core.http.endpoint import Endpoint

U = "/users/{userId}"
R, W = "users.read", "users.write"


def _create(path: str, handler, name: str, schema) -> Endpoint:
    return Endpoint("POST", path, handler, name, scope=W, input=schema, status=201, response="user")


endpoints = [
    Endpoint("GET", "/users", u.users_list, "users.list", scope=R, input=i.UsersList, response="userList"),
    _create("/users", u.user_create, "users.create", i.UserCreate),
    _create("/users/argon2", u.user_create_argon2, "users.createArgon2User", i.HashedUserCreate),
    _create("/users/bcrypt", u.user_create_bcrypt, "users.createBcryptUser", i.HashedUserCreate),
    _create("/users/md5", u.user_create_md5, "users.createMD5User", i.HashedUserCreate),
    _create("/users/phpass", u.user_create_phpass, "users.createPHPassUser", i.HashedUserCreate),
    _create("/users/sha", u.user_create_sha, "users.createSHAUser", i.ShaUserCreate),
    _create("/users/scrypt", u.user_create_scrypt, "users.createScryptUser", i.ScryptUserCreate),
    _create("/users/scrypt-modified", u.user_create_scrypt_modified, "users.createScryptModifiedUser",
            i.ScryptModifiedUserCreate),
    Endpoint("GET", U, u.user_get, "users.get", scope=R, input=i.UserRef, response="user"),
    Endpoint("DELETE", U, u.user_delete, "users.delete", scope=W, input=i.UserRef, status=204),
    Endpoint("PATCH", U + "/name", u.user_update_name, "users.updateName", scope=W, input=i.NameUpdate,
             response="user"),
    Endpoint("PATCH", U + "/email", u.user_update_email, "users.updateEmail", scope=W, input=i.EmailUpdate,
             response="user"),
    Endpoint("PATCH", U + "/phone", u.user_update_phone, "users.updatePhone", scope=W, input=i.PhoneUpdate,
             response="user"),
    Endpoint("PATCH", U + "/password", u.user_update_password, "users.updatePassword", scope=W,
             input=i.PasswordUpdate, response="user"),
    Endpoint("PATCH", U + "/status", u.user_update_status, "users.updateStatus", scope=W, input=i.StatusUpdate,
             response="user"),
    Endpoint("PATCH", U + "/impersonator", u.user_update_impersonator, "users.updateImpersonator", scope=W,
             input=i.ImpersonatorUpdate, response="user"),
    Endpoint("PUT", U + "/labels", u.user_update_labels, "users.updateLabels", scope=W, input=i.LabelsUpdate,
             response="user"),
    Endpoint("PATCH", U + "/verification", u.user_update_email_verification, "users.updateEmailVerification",
             scope=W, input=i.EmailVerificationUpdate, response="user"),
    Endpoint("PATCH", U + "/verification/phone", u.user_update_phone_verification,
             "users.updatePhoneVerification", scope=W, input=i.PhoneVerificationUpdate, response="user"),
    Endpoint("GET", U + "/prefs", u.user_get_prefs, "users.getPrefs", scope=R, input=i.UserRef,
             response="preferences"),
    Endpoint("PATCH", U + "/prefs", u.user_update_prefs, "users.updatePrefs", scope=W, input=i.PrefsUpdate,
             response="preferences"),
    Endpoint("GET", U + "/sessions", u.user_sessions_list, "users.listSessions", scope=R, input=i.SessionsList,
             response="sessionList"),
    Endpoint("POST", U + "/sessions", u.user_session_create, "users.createSession", scope=W, input=i.UserRef,
             status=201, response="session"),
    Endpoint("DELETE", U + "/sessions", u.user_sessions_delete, "users.deleteSessions", scope=W, input=i.UserRef,
             status=204),
    Endpoint("DELETE", U + "/sessions/{sessionId}", u.user_session_delete, "users.deleteSession", scope=W,
             input=i.SessionRef, status=204),
    Endpoint("POST", U + "/tokens", u.user_token_create, "users.createToken", scope=W, input=i.TokenCreate,
             status=201, response="token"),
    Endpoint("POST", U + "/jwts", u.user_jwt_create, "users.createJWT", scope=W, input=i.JwtCreate, status=201,
             response="jwt"),
]
