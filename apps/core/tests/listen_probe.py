"""Helper process for test_cache: starts the cache invalidation listener and prints each change
of its live flag with the time since start (seconds). argv[1]: how long to watch."""

import os
import sys
import time

sys.path.insert(0, os.getcwd())
os.environ["DJANGO_SETTINGS_MODULE"] = "backend.settings"
import django; django.setup()
from apps.core import cache

t0 = time.monotonic()
cache._active()
last = None
while time.monotonic() - t0 < float(sys.argv[1]):
    if cache._live != last:
        last = cache._live
        print(f"{time.monotonic() - t0:.2f} live={last}", flush=True)
    time.sleep(0.02)
