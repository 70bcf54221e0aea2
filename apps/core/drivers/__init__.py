"""Drivers: SQL databases (db/), Redis (resp, kv), process-local caches, the sync/async bridge (runtime)."""
