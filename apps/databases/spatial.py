"""Spatial columns (point, line, polygon) and spatial queries, on PostgreSQL with PostGIS.

**Values** (Appwrite 1.8, longitude then latitude, WGS 84): a point ``[lon, lat]``; a line
``[[lon, lat], ...]`` (at least 2 points); a polygon ``[[[lon, lat], ...], ...]`` (rings of at
least 4 points whose first and last are equal; one ring may be given without the outer list), or
the same as WKT text (``POINT(1 2)``, ``LINESTRING(...)``, ``POLYGON((...), (...))``). Longitudes
are -180..180, latitudes -90..90; a polygon's rings must not cross themselves or each other.
Values are stored as coordinate arrays in the row's JSON and answered that way. A bad value is
400 ``row_invalid_structure`` / ``document_invalid_structure``.

**Queries** (Appwrite's PostgreSQL adapter): ``intersects``, ``crosses``, ``overlaps``,
``touches``, ``covers`` (and ``contains`` on a spatial column), ``spatialEquals`` (and ``equal``),
their ``not*`` forms, with one geometry value; ``distanceEqual``, ``distanceNotEqual``,
``distanceGreaterThan``, ``distanceLessThan`` with ``[[geometry, distance, meters]]``: with
``meters`` true the distance is in meters on the sphere (PostGIS geography), otherwise in degrees.
``isNull``/``isNotNull`` work as on other columns.

**Where it works.** The columns need PostGIS: the extension is created on the first spatial
column (``apps.databases.extensions``). A PostgreSQL without it (or whose user may not create it)
and the embedded SQLite default answer 400 ``general_feature_unsupported`` saying so, and keep
serving everything else. A ``spatial`` index is a GiST index on the geometry plus one on the
geography (so meter distances are indexed too).
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson

from apps.core.errors import AppwriteError
from apps.databases import extensions
from apps.databases import sql as dialect

SPATIAL_KINDS = ("point", "line", "polygon")
GEOJSON_TYPE = {"point": "Point", "line": "LineString", "polygon": "Polygon"}
MAX_POINTS = 10000  # vertices of one value
SRID = 4326

_PREDICATES = {"intersects": "ST_Intersects", "crosses": "ST_Crosses", "overlaps": "ST_Overlaps",
               "touches": "ST_Touches", "covers": "ST_Covers", "contains": "ST_Covers",
               "spatialEquals": "ST_Equals", "equal": "ST_Equals"}
_DISTANCE = {"distanceEqual": "=", "distanceNotEqual": "!=", "distanceGreaterThan": ">", "distanceLessThan": "<"}


class SpatialError(ValueError):
    pass


# --- support ----------------------------------------------------------------------------------

async def require_support(db) -> None:
    """Raises 400 ``general_feature_unsupported`` unless ``db`` is PostgreSQL with PostGIS
    (created here on first use)."""
    if not dialect.is_pg(db):
        raise AppwriteError("general_feature_unsupported",
                            "Spatial columns need PostgreSQL with PostGIS; the embedded SQLite database of this server "
                            "has no spatial support (set DATABASE_URL to a PostgreSQL server with PostGIS).")
    await extensions.ensure(db, "postgis", "Spatial columns")


# --- values -----------------------------------------------------------------------------------

_WKT = re.compile(r"^\s*(POINT|LINESTRING|POLYGON)\s*\((.*)\)\s*$", re.I | re.S)


def _number_pairs(text: str) -> list[list[float]]:
    out = []
    for pair in text.split(","):
        parts = pair.split()
        if len(parts) != 2:
            raise SpatialError("each WKT point needs exactly two coordinates")
        try:
            out.append([float(parts[0]), float(parts[1])])
        except ValueError:
            raise SpatialError("WKT coordinates must be numbers") from None
    return out


def from_wkt(text: str) -> tuple[str, Any]:
    """``(kind, coordinates)`` of a WKT POINT, LINESTRING or POLYGON."""
    found = _WKT.match(text)
    if not found:
        raise SpatialError("not a WKT POINT, LINESTRING or POLYGON")
    kind, body = found.group(1).upper(), found.group(2).strip()
    if kind == "POINT":
        pairs = _number_pairs(body)
        if len(pairs) != 1:
            raise SpatialError("a WKT POINT has one position")
        return "point", pairs[0]
    if kind == "LINESTRING":
        return "line", _number_pairs(body)
    rings = re.findall(r"\(([^()]*)\)", body)
    if not rings or re.sub(r"\([^()]*\)", "", body).replace(",", "").strip():
        raise SpatialError("a WKT POLYGON is a list of parenthesised rings")
    return "polygon", [_number_pairs(r) for r in rings]


def _position(p: Any) -> list[float]:
    if (not isinstance(p, list) or len(p) != 2
            or not all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in p)):
        raise SpatialError("each position must be [longitude, latitude]")
    lon, lat = float(p[0]), float(p[1])
    if not (math.isfinite(lon) and math.isfinite(lat)) or not -180 <= lon <= 180 or not -90 <= lat <= 90:
        raise SpatialError("longitude must be within -180..180 and latitude within -90..90")
    return [lon, lat]


def _depth(value: Any) -> int:
    depth = 0
    while isinstance(value, list) and value:
        value, depth = value[0], depth + 1
    return depth


def normalize(kind: str, value: Any) -> Any:
    """The stored coordinates of ``value`` for a ``kind`` column. Raises :class:`SpatialError`."""
    if isinstance(value, str):
        given, value = from_wkt(value)
        if given != kind:
            raise SpatialError(f"a {kind} column takes a {kind}, not a {given}")
    if kind == "point":
        return _position(value)
    if kind == "polygon" and _depth(value) == 2:  # one ring without the outer list
        value = [value]
    expected = 2 if kind == "line" else 3
    if _depth(value) != expected:
        raise SpatialError(f"a {kind} is {'[[lon, lat], ...]' if kind == 'line' else '[[[lon, lat], ...], ...]'}")
    if kind == "line":
        line = [_position(p) for p in value]
        if len(line) < 2:
            raise SpatialError("a line needs at least 2 points")
        if len(line) > MAX_POINTS:
            raise SpatialError(f"a value may have at most {MAX_POINTS} points")
        return line
    rings = []
    for ring in value:
        if not isinstance(ring, list):
            raise SpatialError("a polygon is a list of rings")
        points = [_position(p) for p in ring]
        if len(points) < 4:
            raise SpatialError("each polygon ring needs at least 4 points")
        if points[0] != points[-1]:
            raise SpatialError("each polygon ring must end at its first point")
        rings.append(points)
    if sum(len(r) for r in rings) > MAX_POINTS:
        raise SpatialError(f"a value may have at most {MAX_POINTS} points")
    _check_simple(rings)
    return rings


def _orient(a, b, c) -> float:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _on_segment(a, b, p) -> bool:
    return min(a[0], b[0]) <= p[0] <= max(a[0], b[0]) and min(a[1], b[1]) <= p[1] <= max(a[1], b[1])


def _cross(a, b, c, d) -> bool:
    """Segments ab and cd share a point."""
    o1, o2, o3, o4 = _orient(a, b, c), _orient(a, b, d), _orient(c, d, a), _orient(c, d, b)
    if ((o1 > 0) != (o2 > 0)) and ((o3 > 0) != (o4 > 0)) and o1 and o2 and o3 and o4:
        return True
    return ((o1 == 0 and _on_segment(a, b, c)) or (o2 == 0 and _on_segment(a, b, d))
            or (o3 == 0 and _on_segment(c, d, a)) or (o4 == 0 and _on_segment(c, d, b)))


def _check_simple(rings: list[list[list[float]]]) -> None:
    """No ring crosses itself (apart from its neighbouring edges meeting) or another ring: the
    self-intersecting polygons PostGIS calls invalid. O(edges²) per value."""
    edges = []
    for r, ring in enumerate(rings):
        for i in range(len(ring) - 1):
            edges.append((r, i, len(ring) - 1, ring[i], ring[i + 1]))
    for x in range(len(edges)):
        r1, i1, n1, a, b = edges[x]
        if a == b:
            raise SpatialError("a polygon ring has a repeated point")
        for y in range(x + 1, len(edges)):
            r2, i2, _, c, d = edges[y]
            if r1 == r2 and (i2 == i1 + 1 or (i1 == 0 and i2 == n1 - 1)):
                continue  # neighbouring edges share a vertex
            if _cross(a, b, c, d):
                raise SpatialError("the polygon crosses itself (its rings must not intersect)")


def _query_geometry(value: Any) -> dict:
    """A query value (coordinates of any of the three kinds, or WKT) as GeoJSON."""
    if isinstance(value, str):
        kind, coords = from_wkt(value)
        return {"type": GEOJSON_TYPE[kind], "coordinates": normalize(kind, coords)}
    depth = _depth(value)
    kind = {1: "point", 2: "line", 3: "polygon"}.get(depth)
    if kind is None:
        raise SpatialError("a geometry is [lon, lat], [[lon, lat], ...] or [[[lon, lat], ...], ...]")
    return {"type": GEOJSON_TYPE[kind], "coordinates": normalize(kind, value)}


# --- SQL --------------------------------------------------------------------------------------

def geometry_expr(key: str, kind: str, alias: str = "r.") -> str:
    """The column's value as a PostGIS geometry. IMMUTABLE throughout (text concatenation,
    ``->>``, ``ST_GeomFromGeoJSON``, ``ST_SetSRID``), so it can be indexed; queries use the same
    text so the index applies."""
    return (f"ST_SetSRID(ST_GeomFromGeoJSON('{{\"type\":\"{GEOJSON_TYPE[kind]}\",\"coordinates\":' || "
            f"({alias}data->>'{key}') || '}}'), {SRID})")


def _param_geometry() -> str:
    return f"ST_SetSRID(ST_GeomFromGeoJSON(%s), {SRID})"


def compile_filter(db, f, q) -> tuple[str, list]:
    """``(sql, params)`` of a spatial query on spatial field ``f`` (``f.spatial`` is its kind).
    Raises 400 ``general_query_invalid``."""
    m = q.method
    if f.base != "spatial":
        raise AppwriteError("general_query_invalid",
                            f'Invalid query: Spatial query "{m}" cannot be applied on non-spatial attribute: '
                            f"{q.attribute}")
    expr = f.expr
    if m == "isNull":
        return f"(r.data->'{f.key}') IS NULL", []
    if m == "isNotNull":
        return f"(r.data->'{f.key}') IS NOT NULL", []
    negate = m.startswith("not") and m[3:4].isupper()
    base = m[3].lower() + m[4:] if negate else m
    try:
        if base in _DISTANCE:
            spec = q.values[0]
            if not isinstance(spec, list) or len(spec) not in (2, 3):
                raise SpatialError("a distance query takes [[geometry, distance, meters]]")
            distance, meters = spec[1], bool(spec[2]) if len(spec) == 3 else False
            if isinstance(distance, bool) or not isinstance(distance, (int, float)) or distance < 0:
                raise SpatialError("the distance must be a non-negative number")
            geometry = orjson.dumps(_query_geometry(spec[0])).decode()
            op = _DISTANCE[base]
            if meters:
                a, b = f"({expr})::geography", f"({_param_geometry()})::geography"
                sql = f"ST_Distance({a}, {b}) {op} %s"
                if op == "<":  # let the geography index narrow it first
                    return f"(ST_DWithin({a}, {b}, %s) AND {sql})", [geometry, distance, geometry, distance]
                return sql, [geometry, distance]
            return f"ST_Distance({expr}, {_param_geometry()}) {op} %s", [geometry, distance]
        fn = _PREDICATES.get(base)
        if fn is None or len(q.values) != 1:
            raise SpatialError(f"{m} is not a spatial query")
        geometry = orjson.dumps(_query_geometry(q.values[0])).decode()
    except SpatialError as exc:
        raise AppwriteError("general_query_invalid", f'Invalid query: {exc} (attribute "{q.attribute}")') from None
    sql = f"{fn}({expr}, {_param_geometry()})"
    return (f"NOT {sql}" if negate else sql), [geometry]


def index_sql(name: str, table_pk: int, key: str, kind: str) -> list[str]:
    """The GiST indexes of a ``spatial`` index on column ``key``: geometry and geography."""
    expr = geometry_expr(key, kind, alias="")
    where = f"WHERE table_id = {int(table_pk)}"
    return [f"CREATE INDEX {name} ON {dialect.ROWS} USING gist (({expr})) {where}",
            f"CREATE INDEX {name}_g ON {dialect.ROWS} USING gist ((({expr})::geography)) {where}"]
