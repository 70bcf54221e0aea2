"""``/v1/graphql`` and ``/v1/graphql/mutation``: GraphQL over the /v1 operations.

Requests: ``POST`` with a JSON body ``{"query": "...", "variables": {...}, "operationName": ...}``;
the web SDK's ``Graphql`` service wraps that object once more (``{"query": {"query": ...}}``),
which is accepted too, and so is a list of such objects (a batch, at most :data:`MAX_BATCH`).
``GET /v1/graphql?query=...&variables=<JSON>`` runs queries only (no mutation over GET).

Each field runs its REST operation through the whole /v1 pipeline (``apps.core.http.pipeline.
handle``) with the caller's own headers (and the project and impersonation query parameters),
so project, credentials, impersonation, scopes, rate limits, parameter
validation and permissions are exactly REST's. A refused field is a GraphQL error with the REST
error's ``code`` and ``type`` in its ``extensions``; the other fields still answer. Cookies a
field sets (a session) are passed on.

Answers: ``200 {"data": ..., "errors"?: [...]}`` once execution started; ``400`` with
``errors`` for a document that does not parse or validate, a query over :data:`MAX_QUERY_LENGTH`
characters or with more than :data:`MAX_ROOT_FIELDS` top-level fields (Appwrite bounds its
queries too).
"""

from __future__ import annotations

from typing import Any

import orjson
from graphql import GraphQLError, OperationType, graphql, parse
from graphql.execution.executor_throwing_on_incremental import ExecutorThrowingOnIncremental
from graphql.language import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    OperationDefinitionNode,
)

from apps.core.drivers.runtime import SYNC
from apps.core.errors import AppwriteError
from apps.core.http.context import RequestContext, Response
from apps.core.http.inputs import Strict
from apps.core.http.params import TRANSPORT_PARAMS
from apps.graphql.schema import Operation, schema

MAX_QUERY_LENGTH = 16_384
MAX_ROOT_FIELDS = 10
MAX_BATCH = 10


class _OneFieldAtATime(ExecutorThrowingOnIncremental):
    """graphql-core's executor, running a query's fields one after the other as it does a
    mutation's. Used under WSGI, where the handler is driven without an event loop
    (``apps.core.drivers.runtime.run_sync``) and the default parallel run of two or more
    fields (``asyncio.gather``) cannot work; under ASGI the fields run in parallel."""

    def execute_fields(self, parent_type, source_value, path, grouped_field_set, position_context):
        return self.execute_fields_serially(parent_type, source_value, path, grouped_field_set, position_context)


class GraphqlParams(Strict):
    query: Any = None
    variables: Any = None
    operationName: str | None = None


async def run_operation(context: dict, op: Operation, args: dict) -> Any:
    """Run ``op`` as a REST request of the caller in ``context`` and return its JSON answer.
    Raises ``GraphQLError`` carrying the REST error."""
    ctx: RequestContext = context["ctx"]
    path = op.path
    for name in op.path_params:
        value = str(args.pop(name))
        if "/" in value or not value:
            raise GraphQLError(f"Invalid `{name}`: must be a non-empty value without '/'.",
                               extensions={"code": 400, "type": "general_argument_invalid"})
        path = path.replace("{" + name + "}", value)
    body = {k: v for k, v in args.items() if v is not None}
    headers = {k: v for k, v in ctx.headers.items() if k not in ("content-length", "transfer-encoding")}
    headers["content-type"] = "application/json"
    sub = RequestContext(mode=ctx.mode, method=op.method, path=path,
                         query=[(n, v) for n, v in ctx.query if n in TRANSPORT_PARAMS], headers=headers,
                         peer_ip=ctx.peer_ip, scheme=ctx.scheme, body=orjson.dumps(body),
                         client_ip=ctx.client_ip, protocol="graphql")
    from apps.core.http.pipeline import handle

    response = await handle(sub)
    context["cookies"].extend(response.cookies)
    if response.status == 204:
        return {"status": True}
    data = orjson.loads(response.body) if response.body else None
    if response.status >= 400:
        data = data or {}
        raise GraphQLError(data.get("message", "Error"),
                           extensions={"code": data.get("code", response.status), "type": data.get("type", "")})
    return data


def _requests(params: GraphqlParams) -> list[dict]:
    """The GraphQL requests of a body: one, a wrapped one, or a batch."""
    q = params.query
    if isinstance(q, str):
        return [{"query": q, "variables": params.variables, "operationName": params.operationName}]
    if isinstance(q, dict):
        return [q]
    if isinstance(q, list) and q and all(isinstance(item, dict) for item in q):
        if len(q) > MAX_BATCH:
            raise AppwriteError("general_argument_invalid", f"At most {MAX_BATCH} queries may be batched.")
        return q
    raise AppwriteError("general_argument_invalid", 'Param "query" must be a GraphQL document, '
                        "an object with one, or a list of such objects.")


def _root_fields(selection_set, fragments: dict, seen: frozenset = frozenset()) -> int:
    """Top-level fields an operation runs, fragments expanded (each is one REST call)."""
    count = 0
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            count += 1
        elif isinstance(selection, InlineFragmentNode):
            count += _root_fields(selection.selection_set, fragments, seen)
        elif isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            if name in fragments and name not in seen:
                count += _root_fields(fragments[name].selection_set, fragments, seen | {name})
    return count


def _error(message: str) -> dict:
    return {"data": None, "errors": [{"message": message}]}


async def _execute(ctx, request: dict, cookies: list, allow_mutation: bool) -> tuple[int, dict]:
    source = request.get("query")
    variables = request.get("variables")
    if isinstance(variables, str) and variables:
        try:
            variables = orjson.loads(variables)
        except orjson.JSONDecodeError:
            return 400, _error("variables is not valid JSON.")
    if not isinstance(source, str) or not source.strip():
        return 400, _error("No GraphQL document in `query`.")
    if len(source) > MAX_QUERY_LENGTH:
        return 400, _error(f"The document is longer than {MAX_QUERY_LENGTH} characters.")
    try:
        document = parse(source)
    except GraphQLError as err:
        return 400, {"data": None, "errors": [err.formatted]}
    name = request.get("operationName")
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode) and (not name or (definition.name and
                                                                              definition.name.value == name)):
            if _root_fields(definition.selection_set, fragments) > MAX_ROOT_FIELDS:
                return 400, _error(f"At most {MAX_ROOT_FIELDS} top-level fields per operation.")
            if definition.operation == OperationType.MUTATION and not allow_mutation:
                return 400, _error("Mutations are not run over GET; POST them.")
    gql_schema, _ = schema()
    result = await graphql(gql_schema, source, context_value={"ctx": ctx, "cookies": cookies},
                           variable_values=variables if isinstance(variables, dict) else None,
                           operation_name=name, executor_class=_OneFieldAtATime if ctx.mode == SYNC else None)
    body: dict = {"data": result.data}
    if result.errors:
        body["errors"] = [err.formatted for err in result.errors]
    return (400 if result.data is None and result.errors else 200), body


async def _answer(ctx, requests: list[dict], batch: bool, allow_mutation: bool) -> Response:
    cookies: list = []
    results = [await _execute(ctx, r, cookies, allow_mutation) for r in requests]
    status = 200 if batch else results[0][0]
    body = [b for _, b in results] if batch else results[0][1]
    return Response(status=status, body=orjson.dumps(body), cookies=cookies)


async def graphql_post(ctx):
    requests = _requests(ctx.params)
    return await _answer(ctx, requests, isinstance(ctx.params.query, list), allow_mutation=True)


async def graphql_get(ctx):
    p = ctx.params
    if not isinstance(p.query, str):
        raise AppwriteError("general_argument_invalid", 'Param "query" is not optional.')
    return await _answer(ctx, _requests(p), False, allow_mutation=False)
