"""Peak memory of parallel previews, measured in a process of its own (run by test_preview_memory).

``python -m apps.storage.tests.preview_probe IMAGE MIME COUNT PARAMS_JSON`` renders IMAGE
COUNT times at once through the server's own path (the ASGI render gate and the blocking
executor) and prints one JSON line: the process's peak RSS before and after, in KiB, and the
output sizes. Pillow allocates pixels outside Python's allocator, so tracemalloc would not see
them: the kernel's high-water RSS of this process's memory (``VmHWM`` in ``/proc/self/status``)
does. Not ``ru_maxrss``: Linux carries it across fork and exec, so a probe started by a large
pytest process would report the parent's size.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from types import SimpleNamespace


def high_water_kib() -> int:
    """Peak resident memory of this process image, in KiB (Linux ``VmHWM``)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


def main(path: str, mime: str, count: int, params: dict) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")
    import django

    django.setup()
    from apps.core.drivers.runtime import ASYNC
    from apps.storage.api import content

    data = open(path, "rb").read()
    p = SimpleNamespace(**{"width": 0, "height": 0, "gravity": "center", "quality": -1, "output": "",
                           "background": "", "rotation": 0, "opacity": 1.0, "borderWidth": 0, "borderColor": "",
                           **params})
    before = high_water_kib()

    async def run():
        return await asyncio.gather(*(content.render_limited(ASYNC, content._render, data, mime, p)
                                      for _ in range(count)))

    results = asyncio.run(run())
    peak = high_water_kib()
    print(json.dumps({"before_kib": before, "peak_kib": peak, "outputs": sorted({len(b) for b, _ in results})}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]))
