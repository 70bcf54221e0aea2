"""The audit log routes."""

from apps.accounts.api.inputs import IdParam, Strict
from apps.audit import api
from apps.core.http.endpoint import Endpoint


class LogsList(Strict):
    queries: list[str] | None = None
    total: bool = True


class UserLogsList(LogsList):
    userId: IdParam


endpoints = [
    Endpoint("GET", "/account/logs", api.account_logs, "account.listLogs", scope="account", input=LogsList,
             response="logList"),
    Endpoint("GET", "/users/{userId}/logs", api.user_logs, "users.listLogs", scope="users.read", input=UserLogsList,
             response="logList"),
]
