"""Running the stages of ``--preset round2``, ``round3`` and ``functions`` (what each stage is: ``round2.py``)."""

from __future__ import annotations

import os
from pathlib import Path

from loadtests.runner import functions, peers
from loadtests.runner import seed as seeding
from loadtests.runner.bench import Bench, log
from loadtests.runner.builds import ASGI_ORDER, BUILDS
from loadtests.runner.round2 import ALL_STAGES, OPEN_STEPS, Stage, build_names, shaped, smoke_shape
from loadtests.runner.scenarios import SCENARIOS, plan
from loadtests.runner.sweep import wsgi_sweep


def all_builds(args) -> dict:
    """Every build round2 may start, by name."""
    out = {b.name: b for b in (BUILDS[n] for n in ASGI_ORDER)}
    out.update({b.name: b for b in wsgi_sweep(args.cores, args.gthread_workers)})
    out.update({b.name: b for b in peers.peer_builds(args.cores)})
    return out


def sweep_names(args) -> list[str]:
    return [b.name for b in wsgi_sweep(args.cores, args.gthread_workers)]


def peer_names(args) -> list[str]:
    return [b.name for b in peers.peer_builds(args.cores)]


def _shape(stage: Stage, smoke: bool) -> tuple[tuple[int, ...], str, int | None]:
    if smoke:
        return (*smoke_shape(stage), 1)
    return stage.vus, stage.duration, stage.rounds or None


def setup_peers(bench: Bench, builds: dict, key: str) -> None:
    """PocketBase, the embedded SQLite database and the PostgreSQL table, each seeded with the
    same rows (``peers.py``); each server is stopped again (runs start their own)."""
    a, work = bench.args, bench.work
    bench.stop_current()  # a server kept from the previous stage (smoke) holds the port
    rows = peers.peer_rows()
    for name, request_log in peers.POCKETBASES.items():
        bench.fill[name] = peers.pocketbase_fill(work, name)
        Path(bench.fill[name]["pbdir"]).parent.mkdir(parents=True, exist_ok=True)
        peers.pocketbase_superuser(Path(bench.fill[name]["pbdir"]))
        server = bench.start(builds[name], f"{name}-seed")
        try:
            peers.seed_pocketbase(server.url, rows, request_log)
        finally:
            server.stop()
        log(f"{name} {peers.pocketbase_version()}: collection {peers.TABLE_ID} with {len(rows)} rows, "
            f"request log {'on' if request_log else 'off'}")

    embedded = builds["asgi-direct-embedded"]
    bench.build_env["asgi-direct-embedded"] = peers.embedded_env(work)
    env = {**os.environ, **bench.server_env, **embedded.env, **bench.build_env["asgi-direct-embedded"]}
    for name in embedded.unset:
        env.pop(name, None)
    peers.prepare_embedded(env)
    emb_key = seeding.create_project(env, a.project)
    for name, k in (("asgi-direct-embedded", emb_key), ("asgi-direct-pg", key)):
        server = bench.start(builds[name], f"{name}-seed")
        try:
            peers.seed_ours(seeding.Client(server.url, a.project, k), rows)
        finally:
            server.stop()
        log(f"{name}: table {peers.TABLE_ID} with {len(rows)} rows")
    for b in peers.peer_builds(a.cores):
        bench.k6_extra[b.name] = peers.peer_k6_env(b)


def run_round2(bench: Bench, key: str, seed_file: Path, features: dict, checkpoint=None) -> dict:
    """Run ``args.stages`` in order; returns what the report needs to know about them.
    ``checkpoint(summary)``, if given, is called after every stage with that summary so far (the
    caller saves the rows measured until then: a long run stopped midway keeps its stages)."""
    a = bench.args
    builds = all_builds(a)
    sweep, peer = sweep_names(a), peer_names(a)
    done: dict[str, dict] = {}
    peers_ready = functions_ready = False
    for key_ in a.stages:
        st = shaped(ALL_STAGES[key_], a)
        names = build_names(st, sweep, peer, a)
        vus_list, duration, rounds = _shape(st, a.smoke)
        rounds = rounds or a.rounds
        log(f"=== stage {st.key}: {st.title}")
        if st.builds == "peers":
            if not peers_ready:
                setup_peers(bench, builds, key)
                peers_ready = True
            todo = [SCENARIOS[n] for n in st.scenarios]
        elif st.builds == "functions":
            if not functions_ready:
                functions.setup(bench, key)
                functions_ready = True
            todo = [SCENARIOS[n] for n in st.scenarios]
        else:
            todo = plan(list(st.scenarios), features, log)
        chosen = [builds[n] for n in names]
        if st.model == "open":
            _open_stage(bench, st, todo, builds["asgi"], key, seed_file, rounds, vus_list[0], duration)
        else:
            for vus in vus_list:
                bench.matrix(todo, chosen, rounds, key, seed_file, stage=st.key, vus=vus, duration=duration)
        done[st.key] = {"title": st.title, "scenarios": [s.name for s in todo], "builds": names,
                        "vus": list(vus_list), "duration": duration, "rounds": rounds, "p95_ms": st.p95_ms,
                        "model": st.model}
        if checkpoint is not None:
            checkpoint(_summary(done, builds))
    bench.stop_current()
    return _summary(done, builds)


def _summary(done: dict, builds: dict) -> dict:
    return {"stages": dict(done), "builds": {n: b.label for n, b in builds.items()
                                             if any(n in d["builds"] for d in done.values())},
            "differences": peers.DIFFERENCES if any(ALL_STAGES[k].builds == "peers" for k in done) else []}


def _open_stage(bench: Bench, st: Stage, todo, asgi, key, seed_file, rounds: int, vus: int, step: str) -> None:
    """Per round (scenario order alternating): a closed-model run of ``step`` at ``vus`` VUs, then
    the step search starting at half its rate, steps of ``step``."""
    a = bench.args
    a.open_duration = step
    for rnd in range(1, rounds + 1):
        order = todo if rnd % 2 else list(reversed(todo))
        log(f"stage {st.key}: round {rnd}/{rounds}")
        for sc in order:
            closed = bench.run_one(sc, asgi, rnd, key, seed_file, stage=st.key, vus=vus, duration=step)
            bench.open_search(sc, asgi, key, seed_file, stage=st.key, rnd=rnd, p95_ms=st.p95_ms,
                              steps=2 if a.smoke else OPEN_STEPS, start=0.5 * closed["iterations_per_s"])
    bench.stop_current()
