"""The GraphQL schema, generated from the OpenAPI document (itself generated from the /v1
endpoint declarations), so GraphQL cannot drift from REST. Library: ``graphql-core``.

Naming and mapping, as Appwrite's GraphQL API:

* one field per operation, named ``<namespace><Method>`` from the operation ID
  (``account.get`` -> ``accountGet``, ``tablesDB.listRows`` -> ``tablesDBListRows``); ``GET``
  operations are fields of ``Query``, the others of ``Mutation``;
* arguments are the operation's path, query and body parameters under their REST names
  (``queries[]`` is ``queries``); strings, integers, numbers and booleans map to ``String``,
  ``Int``, ``Float`` and ``Boolean``, arrays to lists, anything free-form to the ``Json`` scalar;
  a parameter is non-null when every form of the request requires it;
* a response model is an object type named after the model (``user`` -> ``User``), its fields
  with ``$`` written ``_`` (``$id`` -> ``_id``), plus ``data: Json``, the whole object (rows carry
  their table's columns); a response that is one of several models, or none (``204``), is
  ``Json``.

Left out: operations whose answer is not JSON (avatars, file downloads and views, OAuth2
redirects), uploads (``multipart/form-data``), and the GraphQL and OpenAPI routes themselves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import orjson
from graphql import (
    GraphQLArgument,
    GraphQLBoolean,
    GraphQLField,
    GraphQLFloat,
    GraphQLInt,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLString,
)
from graphql.language import ast as gast

SKIPPED = {"graphql.query", "graphql.mutation", "graphql.get", "openapi.get"}


def _parse_json_literal(node, variables=None):
    if isinstance(node, gast.StringValueNode):
        try:
            return orjson.loads(node.value)
        except orjson.JSONDecodeError:
            return node.value
    if isinstance(node, gast.IntValueNode):
        return int(node.value)
    if isinstance(node, gast.FloatValueNode):
        return float(node.value)
    if isinstance(node, gast.BooleanValueNode):
        return node.value
    if isinstance(node, gast.NullValueNode):
        return None
    if isinstance(node, gast.ListValueNode):
        return [_parse_json_literal(v, variables) for v in node.values]
    if isinstance(node, gast.ObjectValueNode):
        return {f.name.value: _parse_json_literal(f.value, variables) for f in node.fields}
    if isinstance(node, gast.VariableNode):
        return (variables or {}).get(node.name.value)
    raise ValueError("not a JSON value")


# Free-form values: any JSON value in variables, an object/list/scalar literal in the document
# (a string literal holding JSON is decoded, as Appwrite's Json scalar does).
Json = GraphQLScalarType(
    "Json", description="Any JSON value.",
    serialize=lambda v: v, parse_value=lambda v: v, parse_literal=_parse_json_literal,
)


@dataclass(frozen=True, slots=True)
class Operation:
    """One GraphQL field: the REST operation it runs."""

    name: str  # the GraphQL field name
    method: str
    path: str  # /v1-relative, with {param} segments
    path_params: tuple[str, ...]
    query_params: tuple[str, ...]  # REST names as sent in a query string (queries[] ...)


def field_name(operation_id: str) -> str:
    namespace, _, method = operation_id.partition(".")
    return namespace + method[:1].upper() + method[1:]


def _gql_name(name: str) -> str:
    return re.sub(r"[^_0-9A-Za-z]", "_", name.replace("$", "_"))


def _non_null(schema: dict) -> dict | None:
    """The schema without a ``null`` alternative, or ``None`` when it is a real union."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        return {**schema, "type": kinds[0]} if len(kinds) == 1 else None
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"]
            return options[0] if len(options) == 1 else None
    return schema


def _input_type(schema: dict):
    plain = _non_null(schema)
    if plain is None:
        return Json
    schema = plain
    kind = str(schema.get("type"))
    if kind == "array":
        return GraphQLList(_input_type(schema.get("items") or {}))
    return {"string": GraphQLString, "integer": GraphQLInt, "number": GraphQLFloat,
            "boolean": GraphQLBoolean}.get(kind, Json)


class _Types:
    """Object types of the response models, made on first use."""

    def __init__(self, schemas: dict):
        self.schemas = schemas
        self.made: dict[str, GraphQLObjectType] = {}

    def model(self, name: str) -> GraphQLObjectType:
        if name not in self.made:
            schema = self.schemas[name]
            type_name = _gql_name(name[:1].upper() + name[1:])
            self.made[name] = GraphQLObjectType(type_name, lambda: self._fields(schema))
        return self.made[name]

    def _fields(self, schema: dict) -> dict[str, GraphQLField]:
        fields = {}
        for prop, sub in (schema.get("properties") or {}).items():
            fields[_gql_name(prop)] = GraphQLField(self.output(sub), resolve=_key(prop))
        fields.setdefault("data", GraphQLField(Json, resolve=lambda obj, _info: obj,
                                               description="The whole object, as JSON."))
        return fields

    def output(self, schema: dict):
        plain = _non_null(schema)
        if plain is None:
            return Json
        if "$ref" in plain:
            return self.model(plain["$ref"].rsplit("/", 1)[1])
        kind = str(plain.get("type"))
        if kind == "array":
            return GraphQLList(self.output(plain.get("items") or {}))
        return {"string": GraphQLString, "integer": GraphQLInt, "number": GraphQLFloat,
                "boolean": GraphQLBoolean}.get(kind, Json)


def _key(prop: str):
    return lambda obj, _info: obj.get(prop) if isinstance(obj, dict) else None


def _body_schema(op: dict) -> tuple[dict, set[str]] | None:
    """``(properties, required)`` of a JSON body (forms of a ``oneOf`` merged; a name is required
    when every form requires it); ``None`` for a multipart body."""
    body = op.get("requestBody")
    if not body:
        return {}, set()
    content = body.get("content", {})
    if "application/json" not in content:
        return None
    schema = content["application/json"]["schema"]
    forms = schema.get("oneOf") or schema.get("anyOf") or [schema]
    props: dict = {}
    required: set[str] | None = None
    for form in forms:
        props.update(form.get("properties") or {})
        needed = set(form.get("required") or ())
        required = needed if required is None else required & needed
    return props, required or set()


def _success(op: dict) -> tuple[int, dict | None]:
    for status, answer in op["responses"].items():
        if status.startswith("2") or status.startswith("3"):
            return int(status), answer
    return 0, None


def _resolver(operation: Operation):
    async def resolve(_root, info, **args):
        from apps.graphql.api import run_operation

        return await run_operation(info.context, operation, dict(args))

    return resolve


def build(document: dict) -> tuple[GraphQLSchema, dict[str, Operation]]:
    """The schema and its operations by field name, from an OpenAPI document."""
    types = _Types(document["components"]["schemas"])
    queries: dict[str, GraphQLField] = {}
    mutations: dict[str, GraphQLField] = {}
    operations: dict[str, Operation] = {}
    for path, methods in document["paths"].items():
        for method, op in methods.items():
            op_id = op["operationId"]
            if op_id in SKIPPED or ".alias" in op_id:
                continue
            status, answer = _success(op)
            content = (answer or {}).get("content") or {}
            if status >= 300 or (status != 204 and "application/json" not in content):
                continue
            body = _body_schema(op)
            if body is None:
                continue
            props, required = body
            args: dict[str, GraphQLArgument] = {}
            path_params: list[str] = []
            query_params: list[str] = []
            for param in op.get("parameters", []):
                name = param["name"].removesuffix("[]")
                kind = _input_type(param.get("schema") or {})
                if param.get("required"):
                    kind = GraphQLNonNull(kind)
                args[name] = GraphQLArgument(kind)
                (path_params if param["in"] == "path" else query_params).append(param["name"])
            for name, sub in props.items():
                kind = _input_type(sub)
                args[name] = GraphQLArgument(GraphQLNonNull(kind) if name in required else kind)
            out = types.output(content["application/json"]["schema"]) if status != 204 else Json
            name = field_name(op_id)
            operations[name] = Operation(name, method.upper(), path.removeprefix("/v1"),
                                         tuple(path_params), tuple(query_params))
            target = queries if method == "get" else mutations
            target[name] = GraphQLField(out, args=args, description=op.get("summary"),
                                        resolve=_resolver(operations[name]))
    schema = GraphQLSchema(
        query=GraphQLObjectType("Query", queries),
        mutation=GraphQLObjectType("Mutation", mutations) if mutations else None,
    )
    return schema, operations


@cache
def schema() -> tuple[GraphQLSchema, dict[str, Operation]]:
    """The schema of this server's route table (built once per process)."""
    from apps.core.openapi.document import document

    return build(document())
