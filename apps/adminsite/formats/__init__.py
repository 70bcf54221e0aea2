"""Date formats of the admin's pages (``FORMAT_MODULE_PATH``): ISO-like ``2026-12-01 16:05`` in
place of ``Dec. 1, 2026, 4:05 p.m.``, shorter in list columns and sortable by eye. Only Django's
templates use them; the API's JSON never goes through Django's formats."""
