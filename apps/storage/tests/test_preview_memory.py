"""Ten parallel previews of a 40-megapixel image fit in 512 MB (each render peaked near 500 MB,
and ten took one process to 1.0-1.7 GB). Peak RSS is measured by the kernel in a process of its
own (``preview_probe``), through the server's render gate and executor; no timing is asserted."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from apps.storage import preview

ROOT = Path(__file__).resolve().parents[3]
SIZE = (7745, 5164)  # 39.99 Mpx, under STORAGE_PREVIEW_MAX_PIXELS


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("big")
    Image.MAX_IMAGE_PIXELS = None
    img = Image.linear_gradient("L").resize(SIZE).convert("RGB")
    paths = {"jpeg": folder / "big.jpg", "png": folder / "big.png"}
    img.save(paths["jpeg"], quality=80)
    img.save(paths["png"])
    assert all(p.stat().st_size < 10 * 1024 * 1024 for p in paths.values())  # STORAGE_PREVIEW_MAX_SIZE
    return paths


CASES = [
    ("jpeg", {"width": 400, "height": 300}),
    ("png", {"width": 400}),
    ("jpeg", {}),
    ("png", {"rotation": 45}),
]


@pytest.mark.parametrize("kind,params", CASES, ids=[f"{k}-{p}" for k, p in CASES])
def test_ten_parallel_previews_fit_in_512_mb(big, kind, params):
    out = subprocess.run([sys.executable, "-W", "ignore", "-m", "apps.storage.tests.preview_probe", str(big[kind]),
                          f"image/{kind}", "10", json.dumps(params)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "DJANGO_SETTINGS_MODULE": "backend.settings"})
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["peak_kib"] < 512 * 1024, result


def test_large_images_render_at_the_asked_size(big):
    data = big["jpeg"].read_bytes()
    body, _ = preview.render(data, "image/jpeg", width=400, height=300)
    assert Image.open(io.BytesIO(body)).size == (400, 300)
    # Asked at its own size, a 40 Mpx image comes back reduced under 4000 x 4000 pixels.
    body, _ = preview.render(data, "image/jpeg")
    w, h = Image.open(io.BytesIO(body)).size
    assert w * h <= preview.WORK_MAX_PIXELS and abs(w / h - SIZE[0] / SIZE[1]) < 0.01
