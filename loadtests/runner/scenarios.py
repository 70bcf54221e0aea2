"""The scenario table: which k6 script, which server features it needs, which builds run it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scenario:
    name: str
    needs: tuple[str, ...]  # features from seed.probe(): rows, files, bench, realtime
    what: str
    asgi_only: bool = False
    script: str = ""
    open_model: bool = True  # part of the --open-model step search
    peer: bool = False  # speaks lib/peer.js: runs against PocketBase and our builds alike (guests, open rules)
    function: bool = False  # executes the seeded function: needs a container engine (--preset functions)
    server_env: tuple[tuple[str, str], ...] = ()  # settings every server running this scenario gets

    @property
    def js(self) -> str:
        return self.script or self.name


SCENARIOS: dict[str, Scenario] = {s.name: s for s in [
    Scenario("ping", (), "GET /v1/ping (project header, no auth)"),
    Scenario("login", (), "POST /v1/account/sessions/email (argon2id verify per request)", open_model=False),
    Scenario("read", ("rows",), "GET one row by id with the VU's session (row permissions)"),
    Scenario("team-read", ("rows", "teams"),
             "GET a row readable only through team:<id>, with a member's session (team roles from the session lookup)"),
    Scenario("account", (), "GET /v1/account with the VU's session (interim authenticated read)"),
    Scenario("mix", ("rows",), "account get, row create/list(queries)/get/update, 1 KiB file up+down"),
    Scenario("insert100", ("rows",), "POST rows with a 100-row `rows` array (API key)"),
    Scenario("wait", ("bench",), "GET /v1/bench/wait: 100 ms I/O wait (BENCH_APP)"),
    Scenario("cpu", ("bench",), "GET /v1/bench/cpu: fib(20) in Python (BENCH_APP)"),
    Scenario("download", ("files",), "GET the 20 MB file download (streamed)", open_model=False),
    Scenario("realtime", ("rows", "realtime"), "row events fanned out to websocket subscribers",
             asgi_only=True, open_model=False),
    Scenario("create", ("rows",), "POST one row with a session (rate-limited route; abuse overhead)"),
    Scenario("txn", ("rows", "transactions"), "transaction: create, stage 5 row creates, commit (session)"),
    Scenario("related", ("rows", "relationships"), "GET a row with its 10 related rows through select (session)"),
    # Peer scenarios (lib/peer.js): the same requests against PocketBase and our builds, as a guest,
    # on a table/collection with open rules, a text column and an indexed number column.
    Scenario("peer-read", (), "guest GET one row by id", open_model=False, peer=True),
    Scenario("peer-list", (), "guest list of 10 rows by a range filter on the indexed number (no total)",
             open_model=False, peer=True),
    Scenario("peer-create", (), "guest create of one row (text + number)", open_model=False, peer=True),
    Scenario("crud", (), "guest create, read, update, delete of one row per iteration, no think time",
             open_model=False, peer=True),
    # Functions (scenarios/functions.js, runner/functions.py): one synchronous execution of a tiny
    # Python function per iteration, with the API key; warm (containers reused) and cold
    # (FUNCTIONS_WARM_SECONDS=0: the servers keep no container, every execution starts one).
    Scenario("fn-warm", (), "synchronous execution of a tiny Python function, warm containers (API key)",
             script="functions", open_model=False, function=True),
    Scenario("fn-cold", (), "synchronous execution of a tiny Python function, a new container every time "
             "(FUNCTIONS_WARM_SECONDS=0; API key)", script="functions", open_model=False, function=True,
             server_env=(("FUNCTIONS_WARM_SECONDS", "0"),)),
]}

DEFAULT = "ping,login,read,mix,insert100,wait,cpu,download,realtime,txn,related"
# Interim stand-ins while a branch is not merged: (scenario, missing feature) -> replacement.
INTERIM = {("read", "rows"): "account"}


def plan(names: list[str], features: dict[str, bool], log=print) -> list[Scenario]:
    """The scenarios that can run on this server; says why each other one is skipped."""
    out: list[Scenario] = []
    for name in names:
        if name not in SCENARIOS:
            raise SystemExit(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
        sc = SCENARIOS[name]
        missing = [f for f in sc.needs if not features.get(f)]
        if not missing:
            out.append(sc)
            continue
        stand_in = INTERIM.get((name, missing[0]))
        if stand_in and len(missing) == 1:
            log(f"  {name}: endpoints for '{missing[0]}' are missing (404 general_route_not_found); "
                f"running '{stand_in}' instead ({SCENARIOS[stand_in].what}) and labelling it as interim")
            if SCENARIOS[stand_in] not in out:
                out.append(SCENARIOS[stand_in])
            continue
        log(f"  SKIP {name}: needs {', '.join(missing)}, which this server does not have yet "
            f"(probe answered 404 general_route_not_found / no websocket)")
    return out
