"""The error catalogue: every Appwrite error type this server answers with.

Each entry is ``type -> (HTTP status, default message)``; the type strings are Appwrite's
(lower-cased constant names from ``src/Appwrite/Extend/Exception.php``).
Raise :class:`AppwriteError` anywhere; the HTTP layer's error funnel renders it as
``{"message", "code", "type", "version"}``.
"""

from __future__ import annotations

CATALOGUE: dict[str, tuple[int, str]] = {
    # general
    "general_argument_invalid": (400, "Invalid parameter."),
    "general_query_invalid": (400, "Invalid query."),
    "general_cursor_not_found": (400, "Cursor not found."),
    "general_bad_request": (400, "There was an error processing your request."),
    "general_payload_too_large": (413, "The request body is too large."),
    "general_access_forbidden": (401, "Access to this API is forbidden."),
    "general_unauthorized_scope": (401, "The current user or API key does not have the required scopes."),
    "general_unknown_origin": (403, "The request originated from an unknown origin."),
    # Appwrite's 405 type (a route whose path exists under other methods; the router adds Allow)
    "general_not_implemented": (405, "This method is not allowed on this route."),
    "general_route_not_found": (404, "The requested route was not found. Please refer to the API docs and try again."),
    "general_rate_limit_exceeded": (429, "Rate limit for the current endpoint has been exceeded. Please try again after some time."),
    "general_service_unavailable": (503, "The server is temporarily overloaded. Please try again shortly."),
    "general_unknown": (500, "Server Error"),
    "database_timeout": (408, "The database query took too long and was cancelled. Narrow it with queries or add an index."),
    "general_server_error": (500, "Server Error"),
    # projects and keys
    "project_not_found": (404, "Project with the requested ID could not be found. Please check the value of the X-Appwrite-Project header to ensure the correct project ID is being used."),
    "project_id_missing": (400, "The project ID is missing. Please check the value of the X-Appwrite-Project header to ensure the correct project ID is being used."),
    "project_key_expired": (401, "The project key has expired. Please generate a new key."),
    # the Project and Webhooks services (apps.projects.api, apps.webhooks)
    "key_not_found": (404, "Key with the requested ID could not be found."),
    "key_already_exists": (409, "Key with the same ID already exists. Try again with a different ID."),
    "key_creation_denied": (403, "An API key cannot be created from a request authorized with an API key. Authenticate with a session instead. To create a short-lived key from a server, use the ephemeral key endpoint."),
    "platform_not_found": (404, "Platform with the requested ID could not be found."),
    "platform_already_exists": (409, "Platform with the same ID already exists in this project. Try again with a different ID."),
    "variable_not_found": (404, "Variable with the requested ID could not be found."),
    "variable_cannot_unset_secret": (400, "Secret variables cannot be marked as non-secret. Please re-create the variable if this is your intention."),
    "variable_already_exists": (409, "Variable with the same ID already exists in this project. Try again with a different ID."),
    "mock_number_not_found": (404, "Mock number with the requested number could not be found."),
    "mock_number_already_exists": (409, "Mock number with the requested number already exists. Try again with a different number. or update OTP of existing mock number."),
    "mock_number_limit_exceeded": (400, "The maximum number of mock phones for this project has been reached."),
    "project_smtp_config_invalid": (400, "Provided SMTP config is invalid. Please check the configured values and try again."),
    "webhook_not_found": (404, "Webhook with the requested ID could not be found."),
    "webhook_already_exists": (409, "Webhook with the same ID already exists. Try again with a different ID."),
    "user_api_key_and_session_set": (403, "API key and session used in the same request. Use either `setSession` or `setKey`."),
    # users and sessions
    "user_already_exists": (409, "A user with the same id, email, or phone already exists in this project."),
    "user_email_already_exists": (409, "A user with the same email already exists in the current project."),
    "user_not_found": (404, "User with the requested ID could not be found."),
    "user_invalid_credentials": (401, "Invalid credentials. Please check the email and password."),
    "user_unauthorized": (401, "The current user is not authorized to perform the requested action."),
    "user_session_already_exists": (401, "Creation of a session is prohibited when a session is active."),
    "user_session_not_found": (404, "The current user session could not be found."),
    "user_blocked": (403, "The current user has been blocked."),
    "user_impersonation_read_only": (403, "Account changes are not allowed while impersonating another user. "
                                          "Send the request without the X-Appwrite-Impersonate-User-* headers to change your own account."),
    "user_password_mismatch": (400, "Passwords do not match. Please check the password and confirm password."),
    "user_jwt_invalid": (401, "The JWT token is invalid. Please check the value of the X-Appwrite-JWT header to ensure the correct token is being used."),
    "user_jwt_and_cookie_set": (403, "You can use either the JWT or the cookie session, not both at the same time."),
    "user_invalid_token": (401, "Invalid token passed in the request."),
    # OAuth2 sign-in and identities
    "user_identity_not_found": (404, "The identity could not be found. Please sign in with OAuth provider to create identity first."),
    "user_oauth2_bad_request": (400, "OAuth2 provider rejected the bad request."),
    "user_oauth2_unauthorized": (401, "OAuth2 provider rejected the unauthorized request."),
    "user_oauth2_provider_error": (424, "OAuth2 provider returned some error."),
    "user_missing_id": (400, "Missing ID from OAuth2 provider."),
    "user_count_exceeded": (400, "The current project has exceeded the maximum number of users. Please check your user limit in the Appwrite console."),
    "project_provider_disabled": (412, "The chosen OAuth provider is disabled. You can enable the OAuth provider using the Appwrite console."),
    "project_provider_unsupported": (400, "The chosen OAuth provider is unsupported."),
    "project_invalid_success_url": (400, "Invalid redirect URL for OAuth success."),
    "project_invalid_failure_url": (400, "Invalid redirect URL for OAuth failure."),
    # account lifecycle: mail, tokens, MFA, project auth settings
    "general_smtp_disabled": (503, "SMTP is disabled on this server: set SMTP_HOST to send mail."),
    "general_phone_disabled": (503, "Phone provider is not configured on this server."),
    "general_service_disabled": (503, "The requested service is disabled."),
    "general_api_disabled": (403, "The requested API is disabled."),
    "user_email_not_found": (400, "User email could not be found."),
    "user_email_already_verified": (409, "User email is already verified"),
    "user_email_not_verified": (400, "User email is not verified"),
    "user_phone_not_found": (400, "The current user does not have a phone number associated with their account."),
    "user_phone_already_verified": (409, "User phone is already verified"),
    "user_phone_not_verified": (400, "User phone is not verified"),
    "user_auth_method_unsupported": (501, "The requested authentication method is either disabled or unsupported. Please check the supported authentication methods in the Appwrite console."),
    "user_more_factors_required": (401, "More factors are required to complete the sign in process."),
    "user_challenge_required": (401, "A recently successful challenge is required to complete this action. A challenge is considered recent for 30 minutes."),
    "user_authenticator_not_found": (404, "Authenticator could not be found on the current user."),
    "user_authenticator_already_verified": (409, "This authenticator is already verified on the current user."),
    "user_recovery_codes_already_exists": (409, "The current user already generated recovery codes and they can only be read once for security reasons."),
    "user_recovery_codes_not_found": (404, "Recovery codes could not be found on the current user."),
    "password_recently_used": (400, "The password you are trying to use is similar to your previous password. For your security, please choose a different password and try again."),
    "password_personal_data": (400, "The password you are trying to use contains references to your name, email, phone or userID. For your security, please choose a different password and try again."),
    # databases
    "database_not_found": (404, "Database not found."),
    "database_already_exists": (409, "Database already exists."),
    "collection_not_found": (404, "Collection with the requested ID could not be found."),
    "collection_already_exists": (409, "A collection with the requested ID already exists."),
    "table_not_found": (404, "Table with the requested ID could not be found."),
    "table_already_exists": (409, "A table with the requested ID already exists."),
    "document_not_found": (404, "Document with the requested ID could not be found."),
    "document_already_exists": (409, "Document with the requested ID already exists."),
    "document_invalid_structure": (400, "The document structure is invalid."),
    "document_missing_payload": (400, "The document data and permissions are missing. You must provide either document data or permissions to be updated."),
    "row_not_found": (404, "Row with the requested ID could not be found."),
    "row_already_exists": (409, "Row with the requested ID already exists."),
    "row_invalid_structure": (400, "The row structure is invalid."),
    "row_missing_payload": (400, "The row data and permissions are missing. You must provide either row data or permissions to be updated."),
    "row_missing_data": (400, "The row data is missing. Try again with row data populated."),
    "document_missing_data": (400, "The document data is missing. Try again with document data populated."),
    "attribute_not_found": (404, "Attribute with the requested ID could not be found."),
    "attribute_already_exists": (409, "Attribute with the requested key already exists."),
    "attribute_not_available": (400, "The requested attribute is not yet available."),
    "attribute_default_unsupported": (400, "Default values cannot be set for array or required attributes."),
    "attribute_value_invalid": (400, "The attribute value is invalid."),
    "attribute_type_invalid": (400, "The attribute type is invalid."),
    "attribute_limit_exceeded": (400, "The maximum number of attributes has been reached."),
    "column_type_invalid": (400, "The column type is invalid."),
    "column_limit_exceeded": (400, "The maximum number of columns has been reached."),
    "index_limit_exceeded": (400, "The maximum number of indexes has been reached."),
    "column_not_found": (404, "Column with the requested key could not be found."),
    "column_already_exists": (409, "Column with the requested key already exists."),
    "column_not_available": (400, "The requested column is not yet available."),
    "index_not_found": (404, "Index with the requested ID could not be found."),
    "index_already_exists": (409, "Index with the requested key already exists."),
    "index_invalid": (400, "Index invalid."),
    "general_feature_unsupported": (400, "This feature is not supported with your current configuration."),
    "relationship_value_invalid": (400, "The relationship value is invalid."),
    "document_delete_restricted": (403, "Document cannot be deleted because it is referenced by another document."),
    "row_delete_restricted": (403, "Row cannot be deleted because it is referenced by another row."),
    # database transactions
    "transaction_not_found": (404, "Transaction with the requested ID could not be found."),
    "transaction_already_exists": (409, "Transaction with the requested ID already exists. Try again with a different ID or use ID.unique() to generate a unique ID."),
    "transaction_invalid": (400, "The transaction is invalid. Please check the transaction state and try again."),
    "transaction_failed": (400, "The transaction has errored. Please check the transaction data and try again."),
    "transaction_expired": (410, "The transaction has expired. Please create a new transaction and try again."),
    "transaction_conflict": (409, "The transaction has a conflict. Please resolve the conflict and try again."),
    "transaction_limit_exceeded": (400, "The maximum number of operations per transaction has been exceeded."),
    "transaction_not_ready": (400, "The transaction is not ready yet. Please try again later."),
    # storage
    "storage_bucket_not_found": (404, "Storage bucket with the requested ID could not be found."),
    "storage_bucket_already_exists": (409, "A storage bucket with the requested ID already exists."),
    "storage_file_not_found": (404, "The requested file could not be found."),
    "storage_file_already_exists": (409, "A storage file with the requested ID already exists."),
    "storage_file_empty": (400, "Empty file passed to the endpoint."),
    "storage_file_type_unsupported": (400, "The given file extension is not supported."),
    "storage_invalid_file_size": (400, "The file size is either not valid or exceeds the maximum allowed size."),
    "storage_invalid_file": (403, "The uploaded file is invalid. Please check the file and try again."),
    "storage_invalid_content_range": (400, "The content range is invalid."),
    "storage_invalid_appwrite_id": (400, "The value for x-appwrite-id header is invalid."),
    "storage_invalid_range": (416, "The requested range is not satisfiable."),
    "storage_bucket_transformations_disabled": (403, "Image transformations are disabled for the requested bucket."),
    # functions (Appwrite's Functions service)
    "function_not_found": (404, "Function with the requested ID could not be found."),
    "function_already_exists": (409, "Function with the requested ID already exists."),
    "function_runtime_unsupported": (404, "The requested runtime is either inactive or unsupported."),
    "function_entrypoint_missing": (404, "Entrypoint for your Appwrite Function is missing. Please specify it when making deployment or update the entrypoint under your function's \"Settings\" > \"Configuration\" > \"Entrypoint\"."),
    "function_synchronous_timeout": (408, "Synchronous function execution timed out. Use asynchronous execution instead, or ensure the execution duration doesn't exceed 30 seconds."),
    "function_executor_unavailable": (503, "Functions cannot run on this server: no container engine is configured. Set FUNCTIONS_EXECUTOR=docker and FUNCTIONS_DOCKER_HOST (a Docker Engine or `podman system service` socket), see docs/functions.md."),
    "deployment_not_found": (404, "Deployment with the requested ID could not be found."),
    "build_not_found": (404, "Build with the requested ID could not be found."),
    "build_not_ready": (400, "Build with the requested ID is building and not ready for execution."),
    "build_in_progress": (400, "Build with the requested ID is already in progress. Please wait before you can retry."),
    "build_already_completed": (400, "Build with the requested ID is already completed and cannot be canceled."),
    "execution_not_found": (404, "Execution with the requested ID could not be found."),
    "execution_in_progress": (400, "Can't delete ongoing execution. Please wait for execution to finish before deleting it."),
    # avatars
    "avatar_set_not_found": (404, "The requested avatar set could not be found."),
    "avatar_not_found": (404, "The request avatar could not be found."),
    "avatar_image_not_found": (404, "The requested image was not found at the URL."),
    "avatar_remote_url_failed": (404, "Failed to fetch favicon from the requested URL."),
    "avatar_icon_not_found": (404, "The requested favicon could not be found."),
    "avatar_svg_sanitization_failed": (400, "SVG sanitization failed."),
    # file tokens
    "token_not_found": (404, "The requested file token could not be found."),
    "token_expired": (401, "The requested file token has expired."),
    "token_resource_type_invalid": (400, "The resource type for the token is invalid."),
    # health
    "health_queue_size_exceeded": (503, "Queue size threshold hit."),
    "health_certificate_expired": (404, "The SSL certificate for the specified domain has expired and is no longer valid."),
    "health_invalid_host": (404, "Failed to establish a connection to the specified domain. Please verify the domain name and ensure that the server is running and accessible."),
    # users service, teams and memberships
    "user_phone_already_exists": (409, "A user with the same phone number already exists in the current project."),
    "database_query_order_null": (400, "The order attribute/column had a null value. Cursor pagination requires all documents/rows order attribute/column values are non-null."),
    "team_not_found": (404, "Team with the requested ID could not be found."),
    "team_already_exists": (409, "Team with requested ID already exists. Please choose a different ID and try again."),
    "team_invalid_secret": (401, "The team invitation secret is invalid. Please request a new invitation and try again."),
    "team_invite_mismatch": (401, "The invite does not belong to the current user."),
    "team_invite_not_found": (404, "The requested team invitation could not be found."),
    "team_membership_mismatch": (404, "The membership ID does not belong to the team ID."),
    "membership_not_found": (404, "Membership with the requested ID could not be found."),
    "membership_already_confirmed": (409, "Membership is already confirmed."),
    # messaging
    "provider_not_found": (404, "Provider with the requested ID could not be found."),
    "provider_already_exists": (409, "Provider with the requested ID already exists."),
    "provider_incorrect_type": (400, "Provider with the requested ID is of the incorrect type."),
    "provider_missing_credentials": (400, "Provider with the requested ID is missing credentials."),
    "topic_not_found": (404, "Topic with the request ID could not be found."),
    "topic_already_exists": (409, "Topic with the request ID already exists."),
    "subscriber_not_found": (404, "Subscriber with the request ID could not be found."),
    "subscriber_already_exists": (409, "Subscriber with the request ID already exists."),
    "user_target_not_found": (404, "The target could not be found."),
    "user_target_already_exists": (409, "A target with the same ID already exists."),
    "target_provider_invalid_type": (400, "Target has an invalid provider type."),
    "message_not_found": (404, "Message with the requested ID could not be found."),
    "message_already_exists": (409, "Message with the requested ID already exists. Try again with a different ID or use ID.unique() to generate a unique ID."),
    "message_missing_target": (400, "Message with the requested ID has no recipients (topics or users or targets)."),
    "message_already_sent": (400, "Message with the requested ID has already been sent."),
    "message_already_processing": (400, "Message with the requested ID is already being processed."),
    "message_already_failed": (400, "Message with the requested ID has already failed."),
    "message_already_scheduled": (400, "Message with the requested ID has already been scheduled for delivery."),
    "message_target_not_email": (400, "Message with the target ID is not an email target."),
    "message_target_not_sms": (400, "Message with the target ID is not an SMS target."),
    "message_target_not_push": (400, "Message with the target ID is not a push target."),
}


class AppwriteError(Exception):
    """An API error with Appwrite's ``type``, HTTP ``status`` and a client-safe ``message``.

    ``headers`` are extra response headers (e.g. ``Retry-After`` on 429).
    Raises ``KeyError`` at construction for a type missing from :data:`CATALOGUE`, so a typo
    fails loudly in tests instead of leaking a wrong status.
    """

    def __init__(self, type: str, message: str | None = None, *, headers: dict[str, str] | None = None):
        status, default = CATALOGUE[type]
        super().__init__(message or default)
        self.type = type
        self.status = status
        self.message = message or default
        self.headers = headers or {}


def unregistered_client(kind: str, client: str, project_id: str) -> str:
    """Appwrite's message for a web origin or redirect host the project has not registered
    (``kind`` ``"Origin"`` or ``"URI"``), with how to register it on this server, which has no
    console: ``createproject --origin`` or the project's page in the admin."""
    return (f"Invalid {kind}. Register your new client ({client}) as a new Web platform on your project "
            f"console dashboard (on this server: `manage.py createproject {project_id or '<projectId>'} "
            f"--origin <scheme://host[:port]> --exists-ok`, or the project's Platforms in the admin).")


def invalid_argument(name: str, reason: str) -> AppwriteError:
    """400 ``general_argument_invalid`` naming the parameter, as Appwrite words it."""
    return AppwriteError("general_argument_invalid", f"Invalid `{name}` param: {reason}")
