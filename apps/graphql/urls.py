"""The GraphQL routes. Scope ``global`` (every caller): each field is then checked as its REST
operation is (``apps.graphql.api``)."""

from typing import Any

from apps.core.http.endpoint import Endpoint
from apps.graphql import api

_G: dict[str, Any] = {"scope": "global", "input": api.GraphqlParams, "response": "any"}

endpoints = [
    Endpoint("GET", "/graphql", api.graphql_get, "graphql.get", **_G),
    Endpoint("POST", "/graphql", api.graphql_post, "graphql.query", **_G),
    Endpoint("POST", "/graphql/mutation", api.graphql_post, "graphql.mutation", **_G),
]
