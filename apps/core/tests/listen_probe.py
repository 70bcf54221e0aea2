"""Helper process for test_cache: starts the cache invalidation listener and prints each change
of its live flag with the time since start (seconds). argv[1]: how long to watch."""

import os
import sys
import time

import django


def main() -> None:
    sys.path.insert(0, os.getcwd())
    os.environ["DJANGO_SETTINGS_MODULE"] = "backend.settings"
    django.setup()
    from apps.core.drivers import cache

    started = time.monotonic()
    cache._active()
    last = None
    while time.monotonic() - started < float(sys.argv[1]):
        if cache._live != last:
            last = cache._live
            print(f"{time.monotonic() - started:.2f} live={last}", flush=True)
        time.sleep(0.02)


if __name__ == "__main__":
    main()
