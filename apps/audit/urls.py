"""The audit log routes."""

from apps.accounts.api.inputs import IdParam
from apps.audit import api
from apps.core.http.endpoint import Endpoint
from apps.core.http.inputs import LooseBool, Strict


class LogsList(Strict):
    queries: list[str] | None = None
    total: LooseBool = True


class UserLogsList(LogsList):
    userId: IdParam


endpoints = [
    Endpoint("GET", "/account/logs", api.account_logs, "account.listLogs", scope="account", input=LogsList,
             response="logList"),
    Endpoint("GET", "/users/{userId}/logs", api.user_logs, "users.listLogs", scope="users.read", input=UserLogsList,
             response="logList"),
]
