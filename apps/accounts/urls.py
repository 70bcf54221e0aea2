"""The account routes (contract §3): one declaration per endpoint."""

from apps.accounts.api import account, lifecycle, mfa, sessions, tokens, users_mfa
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
]

# --- account lifecycle: verification, recovery, sign-in tokens, MFA ----------------------------------
_VERIFY = "/account/verifications/email"
_VERIFY_PHONE = "/account/verifications/phone"
_AUTH = "/account/mfa/authenticators/{type}"
_CHALLENGES = "/account/mfa/challenges"
_CODES = "/account/mfa/recovery-codes"

endpoints += [
    Endpoint("POST", _VERIFY, lifecycle.verification_create, "account.createEmailVerification", scope="account",
             input=i.UrlCreate, abuse="account.verification", status=201, response="token",
             aliases=("/account/verification",)),
    Endpoint("PUT", _VERIFY, lifecycle.verification_confirm, "account.updateEmailVerification", scope="public",
             input=i.TokenConfirm, abuse="account.verification.update", response="token",
             aliases=("/account/verification",)),
    Endpoint("POST", _VERIFY_PHONE, lifecycle.phone_verification_create, "account.createPhoneVerification",
             scope="account", input=i.Empty, abuse="account.verification.phone", status=201, response="token",
             aliases=("/account/verification/phone",)),
    Endpoint("PUT", _VERIFY_PHONE, lifecycle.phone_verification_confirm, "account.updatePhoneVerification",
             scope="public", input=i.TokenConfirm, abuse="account.verification.phone.update", response="token",
             aliases=("/account/verification/phone",)),
    Endpoint("POST", "/account/recovery", lifecycle.recovery_create, "account.createRecovery",
             scope="sessions.write", input=i.RecoveryCreate, abuse="account.recovery", status=201, response="token"),
    Endpoint("PUT", "/account/recovery", lifecycle.recovery_confirm, "account.updateRecovery",
             scope="sessions.write", input=i.RecoveryConfirm, abuse="account.recovery.update", response="token"),
    Endpoint("POST", "/account/tokens/magic-url", tokens.magic_url_create, "account.createMagicURLToken",
             scope="sessions.write", input=i.MagicUrlCreate, abuse="account.token.magic-url", status=201,
             response="token", aliases=("/account/sessions/magic-url",)),
    Endpoint("POST", "/account/tokens/email", tokens.email_token_create, "account.createEmailToken",
             scope="sessions.write", input=i.EmailTokenCreate, abuse="account.token.email", status=201,
             response="token"),
    Endpoint("POST", "/account/tokens/phone", tokens.phone_token_create, "account.createPhoneToken",
             scope="sessions.write", input=i.PhoneTokenCreate, abuse="account.token.phone", status=201,
             response="token", aliases=("/account/sessions/phone",)),
    # Deprecated forms of POST /account/sessions/token (Appwrite keeps them for older SDKs).
    Endpoint("PUT", "/account/sessions/magic-url", sessions.session_create_token, "account.updateMagicURLSession",
             scope="sessions.write", input=i.TokenSessionCreate, abuse="account.session.token",
             session_forbidden=True, status=201, response="session"),
    Endpoint("PUT", "/account/sessions/phone", sessions.session_create_token, "account.updatePhoneSession",
             scope="sessions.write", input=i.TokenSessionCreate, abuse="account.session.token",
             session_forbidden=True, status=201, response="session"),
    Endpoint("PATCH", "/account/mfa", mfa.mfa_update, "account.updateMFA", scope="account", input=i.MfaUpdate,
             response="user"),
    Endpoint("POST", _AUTH, mfa.authenticator_create, "account.createMfaAuthenticator", scope="account",
             input=i.AuthenticatorRef, response="mfaType"),
    Endpoint("PUT", _AUTH, mfa.authenticator_verify, "account.updateMfaAuthenticator", scope="account",
             input=i.AuthenticatorVerify, response="user"),
    Endpoint("DELETE", _AUTH, mfa.authenticator_delete, "account.deleteMfaAuthenticator", scope="account",
             input=i.AuthenticatorRef, status=204),
    Endpoint("POST", _CHALLENGES, mfa.challenge_create, "account.createMfaChallenge", scope="account",
             input=i.ChallengeCreate, abuse="account.mfa.challenge", status=201, response="mfaChallenge",
             aliases=("/account/mfa/challenge",)),
    Endpoint("PUT", _CHALLENGES, mfa.challenge_confirm, "account.updateMfaChallenge", scope="account",
             input=i.ChallengeConfirm, abuse="account.mfa.challenge.update", response="session",
             aliases=("/account/mfa/challenge",)),
    Endpoint("GET", "/account/mfa/factors", mfa.factors_list, "account.listMfaFactors", scope="account",
             input=i.Empty, response="mfaFactors"),
    Endpoint("POST", _CODES, mfa.recovery_codes_create, "account.createMfaRecoveryCodes", scope="account",
             input=i.Empty, status=201, response="mfaRecoveryCodes"),
    Endpoint("GET", _CODES, mfa.recovery_codes_get, "account.getMfaRecoveryCodes", scope="account",
             input=i.Empty, response="mfaRecoveryCodes"),
    Endpoint("PATCH", _CODES, mfa.recovery_codes_regenerate, "account.updateMfaRecoveryCodes", scope="account",
             input=i.Empty, response="mfaRecoveryCodes"),
]

# The Users service's MFA routes (API keys). The rest of /users lives in its own module.
_USER_MFA = "/users/{userId}/mfa"
users_mfa_endpoints = [
    Endpoint("PATCH", _USER_MFA, users_mfa.user_mfa_update, "users.updateMfa", scope="users.write",
             input=i.UserMfaUpdate, response="user"),
    Endpoint("GET", _USER_MFA + "/factors", users_mfa.user_factors_list, "users.listMfaFactors",
             scope="users.read", input=i.UserRef, response="mfaFactors"),
    Endpoint("DELETE", _USER_MFA + "/authenticators/{type}", users_mfa.user_authenticator_delete,
             "users.deleteMfaAuthenticator", scope="users.write", input=i.UserAuthenticatorRef, status=204),
    Endpoint("GET", _USER_MFA + "/recovery-codes", users_mfa.user_recovery_codes_get, "users.getMfaRecoveryCodes",
             scope="users.read", input=i.UserRef, response="mfaRecoveryCodes"),
    Endpoint("PATCH", _USER_MFA + "/recovery-codes", users_mfa.user_recovery_codes_create,
             "users.createMfaRecoveryCodes", scope="users.write", input=i.UserRef, response="mfaRecoveryCodes"),
    Endpoint("PUT", _USER_MFA + "/recovery-codes", users_mfa.user_recovery_codes_regenerate,
             "users.updateMfaRecoveryCodes", scope="users.write", input=i.UserRef, response="mfaRecoveryCodes"),
]
