"""A real SMTP server for tests (aiosmtpd): ``python -m tests.mail.smtp_server --port N --maildir D``.

Each accepted message is written to ``D/<n>.eml`` (complete files only: written aside, then
renamed). ``--refuse`` answers every recipient with 550, like a server that refuses the mail.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
from pathlib import Path

from aiosmtpd.smtp import SMTP


class Store:
    def __init__(self, maildir: Path, refuse: bool):
        self.maildir = maildir
        self.refuse = refuse
        self.counter = itertools.count(len(list(maildir.glob("*.eml"))) + 1)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.refuse:
            return "550 5.7.1 Recipient refused by this test server"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        n = next(self.counter)
        tmp = self.maildir / f".{n}.tmp"
        tmp.write_bytes(envelope.original_content or envelope.content)
        os.replace(tmp, self.maildir / f"{n}.eml")
        return "250 Message accepted for delivery"


async def main(port: int, maildir: Path, refuse: bool) -> None:
    loop = asyncio.get_running_loop()
    store = Store(maildir, refuse)
    server = await loop.create_server(lambda: SMTP(store, hostname="smtp.test"), "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--maildir", type=Path, required=True)
    parser.add_argument("--refuse", action="store_true")
    args = parser.parse_args()
    args.maildir.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(args.port, args.maildir, args.refuse))
