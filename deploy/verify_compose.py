"""The checks deploy/verify-compose.sh runs against a compose deployment it started.

Each subcommand is one check; the script runs them in order and stops at the first failure (exit
status 1, with the reason on stderr). Traffic goes only to the lb's port on 127.0.0.1, the mail
stand-in's port on 127.0.0.1 and the api containers on the compose network the script made.

  sdk       sign-up, session, a table and a row, a file upload and download, all through the
            official Python SDK ``appwrite`` via the lb; writes what it made to --state (JSON)
  realtime  one websocket on each api replica (by container address); a row written through one
            replica must reach the socket held on the other, both ways
  mail      a password recovery: the worker must send the mail to the mail stand-in; the link in
            it must reset the password through the SDK
  rolling   GETs through the lb while one api replica is restarted (``podman restart``): a client
            that retries idempotent GETs must see no failure; the replica must serve again after
  persist   after ``compose down`` / ``up``: the user signs in, the row and the file read back the same
  functions a Python function built by the worker in the host's engine (through the mounted
            socket), run synchronously by an api replica and asynchronously by the worker; from
            inside it the API answers at FUNCTIONS_API_ENDPOINT, and the --blocked addresses
            (PostgreSQL and Redis on the compose network) do not accept a connection
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from appwrite.client import Client
from appwrite.id import ID
from appwrite.input_file import InputFile
from appwrite.permission import Permission
from appwrite.role import Role
from appwrite.services.account import Account
from appwrite.services.functions import Functions
from appwrite.services.storage import Storage
from appwrite.services.tables_db import TablesDB


def fail(message: str) -> None:
    print(f"FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def key_client(args) -> Client:
    return Client().set_endpoint(args.endpoint).set_project(args.project).set_key(args.key)


def user_client(args, secret: str) -> Client:
    return Client().set_endpoint(args.endpoint).set_project(args.project).set_session(secret)


def sign_in(args, email: str, password: str) -> Client:
    """A session for the user; made with the API key, as a server SDK does, so the response
    carries the session secret (a browser gets it as a cookie instead)."""
    secret = Account(key_client(args)).create_email_password_session(email=email, password=password).secret
    return user_client(args, secret)


def wait_columns(tables: TablesDB, db: str, table: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        columns = tables.list_columns(db, table).columns
        # status is Appwrite's column state (an enum in the SDK's models, a string in older ones).
        if columns and all(str(getattr(c, "status", "available")).lower().endswith("available") for c in columns):
            return
        time.sleep(0.3)
    fail("the table's columns never became available")


def check_sdk(args) -> None:
    email, password = f"verify{time.time_ns()}@example.com", "password-one-1"
    guest = Client().set_endpoint(args.endpoint).set_project(args.project)
    user_id = Account(guest).create(user_id=ID.unique(), email=email, password=password).id
    user = sign_in(args, email, password)
    if Account(user).get().email != email:
        fail("account.get() did not return the signed-up user")

    tables = TablesDB(key_client(args))
    db = tables.create(database_id=ID.unique(), name="verify").id
    users = Role.users()
    table = tables.create_table(database_id=db, table_id=ID.unique(), name="notes",
                                permissions=[Permission.read(users), Permission.create(users)]).id
    tables.create_varchar_column(database_id=db, table_id=table, key="title", size=100, required=True)
    wait_columns(tables, db, table)
    row = TablesDB(user).create_row(database_id=db, table_id=table, row_id=ID.unique(), data={"title": "hello"})
    if TablesDB(user).get_row(db, table, row.id).data.get("title") != "hello":
        fail("the row read back differs")

    storage_admin = Storage(key_client(args))
    bucket = storage_admin.create_bucket(bucket_id=ID.unique(), name="verify",
                                         permissions=[Permission.read(users), Permission.create(users)]).id
    # Larger than one 5 MiB chunk, so the SDK's chunked upload crosses the lb several times.
    data = os.urandom(6 * 1024 * 1024 + 12345)
    file_id = Storage(user).create_file(bucket, ID.unique(), InputFile.from_bytes(data, "verify.bin")).id
    if Storage(user).get_file_download(bucket, file_id) != data:
        fail("the downloaded file differs from the upload")
    state = {"email": email, "password": password, "user_id": user_id, "db": db, "table": table, "row": row.id,
             "bucket": bucket, "file": file_id, "sha256": hashlib.sha256(data).hexdigest()}
    with open(args.state, "w") as f:
        json.dump(state, f)
    print(f"sdk: user, session, table {table}, row {row.id}, file {file_id} ({len(data)} bytes) round trip ok")


def replica_request(address: str, method: str, path: str, body: dict | None, headers: dict) -> dict:
    """One request straight to an api container; Host is the public name (ALLOWED_HOSTS)."""
    request = urllib.request.Request(f"http://{address}:8000/v1{path}", method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Host": "localhost", "Content-Type": "application/json", **headers})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"{}")


async def realtime_both_ways(args, state: dict, addresses: list[str], secret: str) -> None:
    from websockets.asyncio.client import connect

    channel = f"tablesdb.{state['db']}.tables.{state['table']}.rows"
    query = urllib.parse.urlencode({"project": args.project, "channels[]": channel})
    headers = {"X-Appwrite-Session": secret}
    sockets = []
    for address in addresses:
        # The URI names the public host (Host header, ALLOWED_HOSTS); host= is where TCP goes.
        ws = await connect(f"ws://localhost:8000/v1/realtime?{query}", host=address, port=8000,
                           additional_headers=headers, open_timeout=10)
        hello = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if hello.get("type") != "connected":
            fail(f"replica {address}: first frame was {hello}")
        sockets.append(ws)
    try:
        for writer, reader in ((0, 1), (1, 0)):
            title = f"from-{addresses[writer]}-{time.time_ns()}"
            replica_request(addresses[writer], "POST", f"/tablesdb/{state['db']}/tables/{state['table']}/rows",
                            {"rowId": "unique()", "data": {"title": title}},
                            {"X-Appwrite-Project": args.project, "X-Appwrite-Session": secret})
            deadline = time.monotonic() + 15
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    fail(f"a row written on {addresses[writer]} never reached the socket on {addresses[reader]}")
                frame = json.loads(await asyncio.wait_for(sockets[reader].recv(), left))
                if frame.get("type") == "event" and frame["data"]["payload"].get("title") == title:
                    break
            print(f"realtime: row written on {addresses[writer]} delivered to the socket on {addresses[reader]}")
    finally:
        for ws in sockets:
            await ws.close()


def check_realtime(args) -> None:
    state = json.load(open(args.state))
    addresses = args.replicas.split(",")
    if len(set(addresses)) < 2:
        fail(f"need two api replicas, got {addresses}")
    secret = Account(key_client(args)).create_email_password_session(
        email=state["email"], password=state["password"]).secret
    asyncio.run(realtime_both_ways(args, state, addresses[:2], secret))


def check_mail(args) -> None:
    state = json.load(open(args.state))
    guest = Account(Client().set_endpoint(args.endpoint).set_project(args.project))
    public = args.endpoint.rsplit("/v1", 1)[0].replace("127.0.0.1", "localhost")
    guest.create_recovery(email=state["email"], url=f"{public}/reset")
    deadline, mail = time.monotonic() + 60, None
    while mail is None and time.monotonic() < deadline:
        listing = json.load(urllib.request.urlopen(f"{args.mail}/api/v1/messages", timeout=5))
        for item in listing["messages"]:
            if any(to["Address"].lower() == state["email"] for to in item["To"]):
                mail = json.load(urllib.request.urlopen(f"{args.mail}/api/v1/message/{item['ID']}", timeout=5))
                break
        else:
            time.sleep(0.5)
    if mail is None:
        fail("no recovery mail reached the mail service within 60 s")
    words = (mail["Text"] + " " + mail["HTML"]).replace('"', " ").replace("'", " ").split()
    link = next((w for w in words if w.startswith(f"{public}/reset?")), None)
    if link is None:
        fail(f"no reset link in the mail: {mail['Text'][:300]}")
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link.replace("&amp;", "&")).query))
    new_password = "password-two-2"
    guest.update_recovery(user_id=params["userId"], secret=params["secret"], password=new_password)
    sign_in(args, state["email"], new_password)
    state["password"] = new_password
    with open(args.state, "w") as f:
        json.dump(state, f)
    print(f"mail: the worker mailed '{mail['Subject']}' to {state['email']}; its link reset the password")


def get_with_retries(url: str, headers: dict, tries: int = 5) -> tuple[bool, int]:
    """GET ``url``; connection errors and 502/503/504 are retried (GET is idempotent) with a short
    back-off. Returns (succeeded, retries used)."""
    for attempt in range(tries):
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as response:
                response.read()
                return True, attempt
        except urllib.error.HTTPError as e:
            if e.code not in (502, 503, 504):
                return False, attempt
        except OSError:
            pass
        time.sleep(0.2 * (attempt + 1))
    return False, tries


def check_rolling(args) -> None:
    state = json.load(open(args.state))
    headers = {"X-Appwrite-Project": args.project, "X-Appwrite-Key": args.key}
    urls = [f"{args.endpoint}/health/version",
            f"{args.endpoint}/tablesdb/{state['db']}/tables/{state['table']}/rows/{state['row']}"]
    stop, results = threading.Event(), []

    def client() -> None:
        n = 0
        while not stop.is_set():
            results.append(get_with_retries(urls[n % 2], headers))
            n += 1
            time.sleep(0.02)

    threads = [threading.Thread(target=client) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(2)
    started = time.monotonic()
    restart = subprocess.run(["podman", "restart", "--time", "30", args.container], capture_output=True, text=True)
    restart_seconds = time.monotonic() - started
    # Wait until the restarted replica is healthy again, then keep the load on a little longer.
    healthy = False
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not healthy:
        healthy = subprocess.run(["podman", "healthcheck", "run", args.container], capture_output=True).returncode == 0
        time.sleep(1)
    time.sleep(3)
    stop.set()
    for t in threads:
        t.join()
    if restart.returncode != 0:
        fail(f"podman restart failed: {restart.stderr.strip()}")
    if not healthy:
        fail(f"{args.container} did not become healthy again after its restart")
    # The restarted replica serves again, at the address it has now.
    address = subprocess.run(["podman", "inspect", "--format",
                              f'{{{{(index .NetworkSettings.Networks "{args.network}").IPAddress}}}}', args.container],
                             capture_output=True, text=True).stdout.strip()
    if replica_request(address, "GET", "/health/version", None, {}).get("version") is None:
        fail(f"{args.container} at {address} does not serve after its restart")
    failed = sum(1 for ok, _ in results if not ok)
    retried = sum(1 for ok, used in results if ok and used)
    print(f"rolling: {len(results)} GETs through the lb while {args.container} restarted "
          f"({restart_seconds:.1f} s): {failed} failed, {retried} needed a retry")
    if failed:
        fail(f"{failed} GETs failed even after retries")


def check_persist(args) -> None:
    state = json.load(open(args.state))
    user = sign_in(args, state["email"], state["password"])
    row = TablesDB(user).get_row(state["db"], state["table"], state["row"])
    if row.data.get("title") != "hello":
        fail("the row did not survive compose down / up")
    data = Storage(user).get_file_download(state["bucket"], state["file"])
    if hashlib.sha256(data).hexdigest() != state["sha256"]:
        fail("the file did not survive compose down / up")
    print(f"persist: after down/up, {state['email']} signs in; row {state['row']} and file {state['file']} intact")


# The function of the functions check: can it reach the API, and each of the addresses it is given?
PROBE = """
import json, os, socket, urllib.request

def main(context):
    out = {}
    for address in context.req.body_json["blocked"]:
        host, port = address.rsplit(":", 1)
        try:
            socket.create_connection((host, int(port)), timeout=3).close()
            out[address] = "connected"
        except OSError as exc:
            out[address] = type(exc).__name__
    api = os.environ["APPWRITE_FUNCTION_API_ENDPOINT"]
    with urllib.request.urlopen(api + "/health/version", timeout=10) as answer:
        out["api"] = json.loads(answer.read())["version"]
    return context.res.json(out)
"""


def _targz(name: str, text: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = text.encode()
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _status(value) -> str:
    return str(getattr(value, "value", value))


def check_functions(args) -> None:
    functions = Functions(key_client(args))
    fid = ID.unique()
    functions.create(function_id=fid, name="verify", runtime="python-3.13", execute=["any"], timeout=30)
    started = time.monotonic()
    d = functions.create_deployment(fid, InputFile.from_bytes(_targz("main.py", PROBE), "code.tar.gz"), activate=True)
    # The worker builds it; the first build on a machine also builds the runtime image.
    while _status(functions.get_deployment(fid, d.id).status) not in ("ready", "failed"):
        if time.monotonic() - started > 900:
            fail("the function's build did not finish within 15 minutes")
        time.sleep(2)
    built = functions.get_deployment(fid, d.id)
    if _status(built.status) != "ready":
        fail(f"the function's build failed: {built.buildlogs[-1500:]}")
    blocked = [a for a in args.blocked.split(",") if a]
    body = json.dumps({"blocked": blocked})
    x = functions.create_execution(fid, body=body)  # synchronous: an api replica runs it
    if _status(x.status) != "completed" or x.responsestatuscode != 200:
        fail(f"the synchronous execution failed: {x.status} {x.responsestatuscode} {x.errors[-1500:]}")
    out = json.loads(x.responsebody)
    reached = [a for a in blocked if out.get(a) == "connected"]
    if reached:
        fail(f"a function reached {', '.join(reached)} (the runtime network must not reach the compose network)")
    if not out.get("api"):
        fail(f"the function did not reach the API at FUNCTIONS_API_ENDPOINT: {out}")
    later = functions.create_execution(fid, body=body, xasync=True)  # the worker runs it
    deadline = time.monotonic() + 120
    while _status(later.status) not in ("completed", "failed") and time.monotonic() < deadline:
        time.sleep(1)
        later = functions.get_execution(fid, later.id)
    if _status(later.status) != "completed":
        fail(f"the asynchronous execution did not complete: {later.status} {later.errors[-1500:]}")
    print(f"functions: built in {time.monotonic() - started:.0f} s; sync and async executions completed; from the "
          f"runtime network the API answered (version {out['api']}) and {', '.join(blocked) or 'nothing'} did not "
          f"({', '.join(str(out[a]) for a in blocked)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("check", choices=["sdk", "realtime", "mail", "rolling", "persist", "functions"])
    parser.add_argument("--endpoint", required=True, help="the lb's /v1 URL on 127.0.0.1")
    parser.add_argument("--project", required=True)
    parser.add_argument("--key", required=True, help="an API key of the project (all scopes)")
    parser.add_argument("--state", required=True, help="JSON file the checks share (in the temp dir)")
    parser.add_argument("--replicas", default="", help="realtime: api container addresses, comma-separated")
    parser.add_argument("--mail", default="", help="mail: the mail service's HTTP URL on 127.0.0.1")
    parser.add_argument("--container", default="", help="rolling: the api container to restart")
    parser.add_argument("--network", default="", help="rolling: the compose network the replicas serve on")
    parser.add_argument("--blocked", default="", help="functions: host:port addresses a function must not reach")
    args = parser.parse_args()
    {"sdk": check_sdk, "realtime": check_realtime, "mail": check_mail, "rolling": check_rolling,
     "persist": check_persist, "functions": check_functions}[args.check](args)


if __name__ == "__main__":
    main()
