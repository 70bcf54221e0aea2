"""The gate in front of the connection pool (apps/core/drivers/db/gate.py): arrival order, the pool's
timeout and waiting limit, cancellation; and on the real PostgreSQL, a request that waits past
``DB_POOL_TIMEOUT`` for a connection gets the 503 the pool's own timeout gave."""

from __future__ import annotations

import asyncio
import os

import psycopg_pool
import pytest

from apps.core.drivers.db.faults import DatabaseUnavailable, PoolQueueFull, PoolTimeout
from apps.core.drivers.db.gate import Gate


def _run(coro):
    return asyncio.run(coro)


def test_slots_are_handed_out_in_arrival_order():
    async def main():
        gate, order = Gate(1), []
        await gate.acquire(5)

        async def waiter(name):
            await gate.acquire(5)
            order.append(name)
            await asyncio.sleep(0)
            gate.release()

        tasks = [asyncio.create_task(waiter(n)) for n in "abc"]
        await asyncio.sleep(0)
        assert gate.waiting == 3
        gate.release()
        await asyncio.gather(*tasks)
        assert order == ["a", "b", "c"]
        await gate.acquire(0.01)  # every slot came back: the next caller does not wait

    _run(main())


def test_a_wait_longer_than_the_timeout_raises_pool_timeout():
    async def main():
        gate = Gate(1)
        await gate.acquire(5)
        with pytest.raises(PoolTimeout) as caught:
            await gate.acquire(0.05)
        assert caught.value.waited == 0.05
        assert gate.waiting == 0
        gate.release()  # the timed-out waiter is skipped: the slot is free again
        await gate.acquire(0.01)

    _run(main())


def test_more_waiters_than_max_waiting_are_refused_at_once():
    async def main():
        gate = Gate(1, max_waiting=2)
        await gate.acquire(5)
        queued = [asyncio.create_task(gate.acquire(5)) for _ in range(2)]
        await asyncio.sleep(0)
        with pytest.raises(PoolQueueFull) as caught:
            await gate.acquire(5)
        assert caught.value.waiting == 2
        gate.release()
        gate.release()
        await asyncio.gather(*queued)

    _run(main())


def test_a_cancelled_waiter_holds_nothing():
    async def main():
        gate = Gate(1)
        await gate.acquire(5)
        cancelled = asyncio.create_task(gate.acquire(5))
        await asyncio.sleep(0)
        cancelled.cancel()
        await asyncio.gather(cancelled, return_exceptions=True)
        gate.release()
        await gate.acquire(0.01)  # the cancelled waiter did not take the slot

        # Cancelled in the same loop step as it is handed the slot: it passes the slot on.
        late = asyncio.create_task(gate.acquire(5))
        nxt = asyncio.create_task(gate.acquire(5))
        await asyncio.sleep(0)
        gate.release()  # hands the slot to `late`...
        late.cancel()  # ...which is cancelled before it resumes
        await asyncio.gather(late, return_exceptions=True)
        await asyncio.wait_for(nxt, 1)  # so `nxt` gets it
        assert gate.waiting == 0

    _run(main())


def test_the_gates_refusals_are_the_projects_503_not_psycopg_pools():
    """The asyncpg path raises the project's own types (apps/core/drivers/db/faults.py): Appwrite's 503
    ``general_service_unavailable`` with ``Retry-After``, not a read-from-the-connection retry."""
    async def main():
        gate = Gate(1, max_waiting=1)
        await gate.acquire(5)
        queued = asyncio.create_task(gate.acquire(0.05))
        await asyncio.sleep(0)
        with pytest.raises(PoolQueueFull) as full:
            await gate.acquire(5)
        with pytest.raises(PoolTimeout) as late:
            await queued
        return full.value, late.value

    for err in _run(main()):
        assert isinstance(err, DatabaseUnavailable) and not isinstance(err, (psycopg_pool.PoolTimeout, psycopg_pool.TooManyRequests))
        assert (err.status, err.type, err.headers, err.lost) == (503, "general_service_unavailable",
                                                                  {"Retry-After": "1"}, False)


@pytest.mark.django_db(transaction=False)
def test_waiting_past_the_pool_timeout_answers_503(settings):
    """One pooled connection, held by an open transaction: a second statement waits
    ``DB_POOL_TIMEOUT`` and gets 503 ``general_service_unavailable``; after the transaction
    ends the next statement runs."""
    from apps.core.drivers.db.postgres import PgAsync

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip("needs DATABASE_URL on PostgreSQL")
    settings.DB_POOL_MIN_SIZE, settings.DB_POOL_MAX_SIZE, settings.DB_POOL_TIMEOUT = 0, 1, 0.3

    async def main():
        db = PgAsync(url)
        try:
            async with db.transaction() as tx:
                assert (await tx.fetchone("SELECT 1 AS one"))["one"] == 1
                with pytest.raises(PoolTimeout) as caught:
                    await db.fetchone("SELECT 2 AS two")
                assert caught.value.status == 503 and caught.value.waited == 0.3
            assert (await db.fetchone("SELECT 3 AS three"))["three"] == 3
        finally:
            await db.close()

    _run(main())
