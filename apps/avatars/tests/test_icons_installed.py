"""Whether an icon set is installed (a server started without ``npm ci`` in apps/avatars/assets
says so in its 404, rather than blaming the code asked for)."""

from __future__ import annotations

from apps.avatars import icons


def test_an_empty_icons_dir_has_no_set(settings, tmp_path):
    settings.AVATARS_ICONS_DIR = str(tmp_path)
    assert not any(icons.installed(kind) for kind in ("browsers", "credit-cards", "flags"))
    (tmp_path / "flag-icons").mkdir()
    assert icons.installed("flags") and not icons.installed("browsers")
