"""Benchmark data: the dedicated database, a project and key, and seeding through the API.

Everything after the project/key is created through the public API with the key (accounts,
TablesDB, storage routes), so the same code seeds an external server (``--target-url``). Each user gets a session
created with the key (the key bypasses abuse checks and receives the session secret): the VUs log in once, before the run, never inside the measured loop (except `login`).
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import psycopg
import requests

from loadtests.runner.builds import PY, ROOT

PASSWORD = "bench-password-123"
DATABASE_ID, TABLE_ID, BUCKET_ID, BIG_FILE_ID = "bench", "items", "bench", "big20mb"
CHUNK = 5 * 1024 * 1024


def prepare_database(admin_url: str, name: str, fresh: bool, env: dict[str, str]) -> None:
    """Create database ``name`` on the server of ``admin_url`` (dropped first if ``fresh``), migrate."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists and fresh:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
            exists = None
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
    subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)


_PROJECT = """
import os, sys, django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")
django.setup()
from apps.core.http.auth import KEY_SCOPES
from apps.projects.models import Project
from apps.projects.services import api_key_create, project_create
pid = sys.argv[1]
if not Project.objects.filter(uid=pid).exists():
    project_create(project_id=pid, name="Load tests", origins=[])
print(api_key_create(project_id=pid, name="loadtests", scopes=sorted(KEY_SCOPES))[1])
"""


def create_project(env: dict[str, str], project: str) -> str:
    """Create ``project`` if missing and a fresh all-scopes key (the operator commands' services,
    in one process); returns the key secret."""
    out = subprocess.run([PY, "-c", _PROJECT, project], cwd=ROOT, env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"creating the project failed:\n{out.stderr[-2000:]}")
    return out.stdout.strip().splitlines()[-1]


class Client:
    def __init__(self, url: str, project: str, key: str):
        self.v1 = url.rstrip("/") + "/v1"
        self.project, self.key = project, key
        self.http = requests.Session()
        # Like an SDK on a server: never replay the session cookies of earlier answers (they would
        # outrank the X-Appwrite-Session header and act as the last user created).
        self.http.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))

    def call(self, method, path, *, key=True, session=None, **kw):
        h = {"X-Appwrite-Project": self.project, **kw.pop("headers", {})}
        if key:
            h["X-Appwrite-Key"] = self.key
        if session:
            h["X-Appwrite-Session"] = session
        return self.http.request(method, self.v1 + path, headers=h, timeout=60, **kw)


def route_exists(client: Client, method: str, path: str) -> bool:
    """False when the server answers 404 ``general_route_not_found`` (the branch is not merged)."""
    r = client.call(method, path)
    if r.status_code != 404:
        return True
    try:
        return r.json().get("type") != "general_route_not_found"
    except ValueError:
        return True


def realtime_available(url: str, project: str) -> bool:
    """True if /v1/realtime accepts a websocket and sends the ``connected`` frame."""
    from websockets.sync.client import connect

    try:
        with connect(url.replace("http", "ws", 1) + f"/v1/realtime?project={project}", open_timeout=3) as ws:
            return json.loads(ws.recv(timeout=3)).get("type") == "connected"
    except Exception:
        return False


def probe(client: Client, url: str) -> dict[str, bool]:
    """Which features the server has today (each scenario needs some)."""
    return {
        "rows": route_exists(client, "GET", "/tablesdb"),
        "files": route_exists(client, "GET", "/storage/buckets"),
        "bench": route_exists(client, "GET", "/bench/cpu"),
        "teams": route_exists(client, "GET", "/teams"),
        "realtime": realtime_available(url, client.project),
        # Servers without transactions take "transactions" for a database ID (404 database_not_found).
        "transactions": client.call("GET", "/tablesdb/transactions").status_code == 200,
    }


def _user(client: Client, i: int) -> dict:
    email = f"lt{i}@bench.test"
    r = client.call("POST", "/account", json={"userId": f"lt{i}", "email": email, "password": PASSWORD})
    if r.status_code not in (201, 409):
        raise RuntimeError(f"POST /account: {r.status_code} {r.text[:200]}")
    s = client.call("POST", "/account/sessions/email", json={"email": email, "password": PASSWORD})
    if s.status_code != 201:
        raise RuntimeError(f"POST /account/sessions/email: {s.status_code} {s.text[:200]}")
    return {"id": f"lt{i}", "email": email, "password": PASSWORD, "session": s.json()["secret"]}


def _ok(r, *codes):
    if r.status_code not in (*codes, 409):
        raise RuntimeError(f"{r.request.method} {r.request.url}: {r.status_code} {r.text[:300]}")
    return r


def _seed_rows(client: Client, users: list[dict]) -> None:
    c = client.call
    _ok(c("POST", "/tablesdb", json={"databaseId": DATABASE_ID, "name": "Load tests"}), 201)
    t = f"/tablesdb/{DATABASE_ID}/tables"
    _ok(c("POST", t, json={"tableId": TABLE_ID, "name": "Items", "rowSecurity": True,
                           "permissions": ['create("users")']}), 201)
    t = f"{t}/{TABLE_ID}"
    for key, kind, extra in (("title", "varchar", {"size": 256}), ("owner", "varchar", {"size": 64}),
                             ("n", "integer", {})):
        r = c("POST", f"{t}/columns/{kind}", json={"key": key, "required": False, **extra})
        if r.status_code in (400, 404) and kind == "varchar":  # servers without the 1.9 kinds
            r = c("POST", f"{t}/columns/string", json={"key": key, "required": False, **extra})
        _ok(r, 201, 202)
    c("POST", f"{t}/indexes", json={"key": "owner_idx", "type": "key", "columns": ["owner"]})

    def row(u):
        rid = f"seed-{u['id']}"
        _ok(c("POST", f"{t}/rows", key=False, session=u["session"],
              json={"rowId": rid, "data": {"title": "seed", "owner": u["id"], "n": 0}}), 201)
        u["rowId"] = rid

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(row, users))


TEAM_ID, TEAM_ROW_ID = "bench-team", "team-row"


def _seed_team(client: Client, users: list[dict]) -> None:
    """A team with every seeded user as a member (added by the key: confirmed at once) and a row
    that only the team may read (``read("team:bench-team")``)."""
    c = client.call
    _ok(c("POST", "/teams", json={"teamId": TEAM_ID, "name": "Load tests"}), 201)

    def member(u):
        _ok(c("POST", f"/teams/{TEAM_ID}/memberships", json={"userId": u["id"], "roles": ["reader"]}), 201)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(member, users))
    _ok(c("POST", f"/tablesdb/{DATABASE_ID}/tables/{TABLE_ID}/rows", json={
        "rowId": TEAM_ROW_ID, "data": {"title": "team only"}, "permissions": [f'read("team:{TEAM_ID}")']}), 201)


RELATED_AUTHORS = 10  # the `related` scenario reads one of these authors with its 10 books


def _seed_related(client: Client) -> bool:
    """Two tables linked one-to-many (authors -> books) and 10 authors with 10 books each, made
    with nested rows in one create per author. False when the server has no relationships."""
    c = client.call
    t = f"/tablesdb/{DATABASE_ID}/tables"
    for table, column in (("rel_authors", "name"), ("rel_books", "title")):
        _ok(c("POST", t, json={"tableId": table, "name": table, "permissions": ['read("users")']}), 201)
        _ok(c("POST", f"{t}/{table}/columns/varchar", json={"key": column, "size": 64, "required": False}), 202)
    r = c("POST", f"{t}/rel_authors/columns/relationship", json={
        "relatedTableId": "rel_books", "type": "oneToMany", "twoWay": True, "key": "books", "twoWayKey": "author"})
    if r.status_code not in (202, 409):
        return False
    for a in range(RELATED_AUTHORS):
        books = [{"$id": f"a{a}-b{b}", "title": f"book {b}"} for b in range(10)]
        _ok(c("POST", f"{t}/rel_authors/rows", json={"rowId": f"a{a}", "data": {"name": f"author {a}",
                                                                                "books": books}}), 201)
    return True


def _seed_files(client: Client, big_mb: int) -> None:
    c = client.call
    _ok(c("POST", "/storage/buckets", json={
        "bucketId": BUCKET_ID, "name": "Load tests", "permissions": ['create("users")', 'read("users")'],
        "fileSecurity": False, "maximumFileSize": 30_000_000, "encryption": False, "antivirus": False,
        "compression": "none"}), 201)
    files = f"/storage/buckets/{BUCKET_ID}/files"
    if c("GET", f"{files}/{BIG_FILE_ID}").status_code == 200:
        # A reused database can name a file whose bytes live in another checkout's STORAGE_ROOT
        # (the download then answers 404 storage_file_not_found): upload it again.
        if c("GET", f"{files}/{BIG_FILE_ID}/download", headers={"Range": "bytes=0-0"}).status_code == 206:
            return
        _ok(c("DELETE", f"{files}/{BIG_FILE_ID}"), 204)
    data = os.urandom(big_mb * 1024 * 1024)
    for start in range(0, len(data), CHUNK):
        end = min(start + CHUNK, len(data)) - 1
        _ok(c("POST", files, headers={"Content-Range": f"bytes {start}-{end}/{len(data)}",
                                      "X-Appwrite-ID": BIG_FILE_ID},
              data={"fileId": BIG_FILE_ID}, files={"file": ("big.bin", data[start:end + 1])}), 200, 201)


def seed(client: Client, url: str, users: int, big_mb: int, log=print) -> dict:
    """Probe, create users+sessions, and the table/bucket when those routes exist."""
    features = probe(client, url)
    log(f"features: {', '.join(f'{k}={'yes' if v else 'no'}' for k, v in features.items())}")
    with ThreadPoolExecutor(8) as pool:
        seeded = list(pool.map(lambda i: _user(client, i), range(users)))
    log(f"seeded {len(seeded)} users with sessions")
    out = {"users": seeded, "features": features, "databaseId": DATABASE_ID, "tableId": TABLE_ID,
           "bucketId": BUCKET_ID, "bigFileId": BIG_FILE_ID}
    if features["rows"]:
        _seed_rows(client, seeded)
        out["rowIds"] = [u["rowId"] for u in seeded]
        r = client.call("POST", f"/tablesdb/{DATABASE_ID}/tables/{TABLE_ID}/rows", key=False,
                        session=seeded[0]["session"], json={"rowId": "unique()", "data": {"title": "probe"}})
        features["abuse"] = "x-ratelimit-limit" in {k.lower() for k in r.headers}
        log(f"seeded database/table/rows; abuse headers on row create: {features['abuse']}")
        if features["teams"]:
            _seed_team(client, seeded)
            out["teamRowId"] = TEAM_ROW_ID
            log(f"seeded team {TEAM_ID} with {len(seeded)} members and a row only it may read")
        features["relationships"] = _seed_related(client)
        log(f"seeded related rows (authors with 10 books): {features['relationships']}")
    if features["files"]:
        _seed_files(client, big_mb)
        log(f"seeded bucket and a {big_mb} MB file")
    return out


def estimate_seed_s(users: int) -> float:
    """Rough seconds to seed ``users`` users with sessions, their rows and the big file (for --plan):
    argon2id hashing twice per user dominates."""
    return 20 + 0.06 * users
