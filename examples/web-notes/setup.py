"""Create what the notes demo needs on a server, through the API, with the Python SDK.

    python examples/web-notes/setup.py --endpoint http://127.0.0.1:8000/v1 --project demo --key <API key>

Creates (or keeps, when they exist) a TablesDB database, a ``notes`` table with row security
(users may create; each row is readable and writable by its owner only), its columns, a key
index on ``owner`` and a fulltext index on ``title`` and one on ``body`` (the page's search), and
an ``attachments`` bucket with file security; then writes ``dist/config.js`` (when the demo is
built) so the page knows the IDs and the password policy. Running it again is safe.

Password policy: this server has no HTTP API for a project's authentication settings (on
Appwrite they belong to the console), so when the script runs from a checkout of this
repository it sets them with ``manage.py createproject <project> --exists-ok`` (the same database
as the server: run it with the server's ``DATABASE_URL``): common passwords and passwords that
contain the user's name or email are refused, 8 characters at least. ``--no-password-policy``
skips that; the page then only asks for 8 characters. A running server sees the change within
``PROJECT_CACHE_TTL`` seconds (30 by default).

With ``--oidc-client-id`` and ``--oidc-discovery-url`` (and the client secret from
``--oidc-secret-file`` or standard input with ``--oidc-secret-stdin``) it also configures and
enables the project's OpenID Connect provider (``oidc``) and adds ``"oauth2": "oidc"`` to
``config.js`` (the page then shows "Sign in with OpenID"). The API has no route for provider
settings, so this step runs ``manage.py oauthprovider`` of this repository: run the script where
the server's environment is (``DATABASE_URL``, ``OAUTH2_SECRET_KEYS``). It prints the callback URL
to register at the provider.

Exit status: 0 when everything is in place; 3 when the server lacks a feature the demo uses
(TablesDB or Storage answer 404 ``general_route_not_found``): the rest is still set up and the
message says what is missing; 1 on any other error. The API key needs the databases, tables,
columns, indexes and buckets write scopes (``createapikey <project> --all-scopes``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from appwrite.client import Client
from appwrite.enums.tables_db_index_type import TablesDBIndexType
from appwrite.exception import AppwriteException
from appwrite.permission import Permission
from appwrite.role import Role
from appwrite.services.storage import Storage
from appwrite.services.tables_db import TablesDB

HERE = Path(__file__).resolve().parent
MANAGE = HERE.parents[1] / "manage.py"
MISSING = 3
# What the demo asks of passwords (Appwrite's project settings, as createproject spells them),
# and how config.js tells the page, which words the rule for people.
POLICY_OPTIONS = ["--password-dictionary", "--personal-data-check"]
POLICY = {"minLength": 8, "dictionary": True, "personalData": True}

# key -> (varchar size or None for a text column, required). `owner` and `fileId` hold IDs
# (36 chars at most, Appwrite's ID rule).
COLUMNS = {
    "title": (256, True),
    "body": (None, False),
    "owner": (36, True),
    "fileId": (36, False),
    "fileName": (256, False),
    # The title and body folded (lower case, no accents) by the page: its search matches inside
    # words and ignores accents with `contains` on this column (src/search.js).
    "searchText": (None, False),
}


class FeatureMissing(Exception):
    """The server answered 404 general_route_not_found: that API is not on this server."""


def step(label: str, create, exists_type: str):
    """Run ``create``; a 409 of ``exists_type`` means it is already there. Prints one line."""
    try:
        result = create()
        print(f"  {label}: created")
        return result
    except AppwriteException as exc:
        if exc.code == 409 and exc.type == exists_type:
            print(f"  {label}: already there")
            return None
        if exc.code == 404 and exc.type == "general_route_not_found":
            raise FeatureMissing(label) from None
        raise


def wait_available(db: TablesDB, database: str, table: str, key: str, created, timeout: float = 30) -> None:
    """Columns are created asynchronously on Appwrite (202, status ``processing``); wait for
    ``available`` before rows use them."""
    def status_of(column) -> str:
        status = getattr(column, "status", "available") if column is not None else "available"
        return str(getattr(status, "value", status))  # the SDK parses it into a ColumnStatus enum

    status = status_of(created)
    deadline = time.monotonic() + timeout
    while status != "available":
        if status == "failed" or time.monotonic() > deadline:
            raise RuntimeError(f"column {key!r} is {status!r}, not available")
        time.sleep(0.3)
        status = status_of(db.get_column(database, table, key))


def setup_tables(db: TablesDB, database: str, table: str) -> None:
    step(f"database {database}", lambda: db.create(database, "Web notes"), "database_already_exists")
    step(
        f"table {table}",
        lambda: db.create_table(database, table, "Notes", permissions=[Permission.create(Role.users())],
                                row_security=True),
        "table_already_exists",
    )
    for key, (size, required) in COLUMNS.items():
        if size is None:
            create = lambda k=key, r=required: db.create_text_column(database, table, k, r)  # noqa: E731
        else:
            create = lambda k=key, s=size, r=required: db.create_varchar_column(database, table, k, s, r)  # noqa: E731
        created = step(f"column {key}", create, "column_already_exists")
        wait_available(db, database, table, key, created)
    step("index owner", lambda: db.create_index(database, table, "owner", TablesDBIndexType.KEY, ["owner"]),
         "index_already_exists")
    # One fulltext index per column: Query.search(column, ...) needs one that covers the column,
    # and the page matches each word in the title or the body.
    for key in ("title", "body"):
        step(f"fulltext index {key}",
             lambda k=key: db.create_index(database, table, f"search_{k}", TablesDBIndexType.FULLTEXT, [k]),
             "index_already_exists")


def setup_storage(storage: Storage, bucket: str) -> None:
    step(
        f"bucket {bucket}",
        lambda: storage.create_bucket(bucket, "Note attachments", permissions=[Permission.create(Role.users())],
                                      file_security=True, maximum_file_size=30_000_000),
        "storage_bucket_already_exists",
    )


def set_password_policy(project: str) -> dict | None:
    """Turn on the demo's password policy for ``project`` with ``manage.py createproject
    --exists-ok`` (see the module docstring). Returns the policy for config.js, or None (with a
    line saying why) when this is not a checkout or the command fails."""
    if not MANAGE.is_file():
        print("  password policy: manage.py not found (not a checkout); set it on the server")
        return None
    result = subprocess.run([sys.executable, str(MANAGE), "createproject", project, "--exists-ok", *POLICY_OPTIONS],
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        print(f"  password policy: not set ({(result.stderr or result.stdout).strip()[-300:]})")
        return None
    print("  password policy: common passwords and personal data refused, 8 characters at least")
    return POLICY


def setup_openid(args) -> None:
    """Store and enable the project's ``oidc`` provider through ``manage.py oauthprovider`` (the
    secret goes on its standard input, never on a command line). Raises RuntimeError when the
    secret is empty or the command fails."""
    if args.oidc_secret_file:
        secret = args.oidc_secret_file.read_text(encoding="utf-8").strip()
    else:
        secret = sys.stdin.read().strip()
    if not secret:
        raise RuntimeError("the OpenID client secret is empty")
    # `--opt=value`: a generated client ID may begin with "-".
    command = [sys.executable, str(MANAGE), "oauthprovider", args.project, "oidc", "--enable",
               f"--client-id={args.oidc_client_id}", f"--discovery-url={args.oidc_discovery_url}", "--secret-stdin"]
    done = subprocess.run(command, input=secret, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"manage.py oauthprovider failed: {(done.stderr or done.stdout).strip()}")
    print("  OpenID provider oidc: configured and enabled; its callback URL is "
          f"{args.endpoint.rstrip('/')}/account/sessions/oauth2/callback/oidc/{args.project}")


def write_config(path: Path, config: dict) -> None:
    path.write_text(
        "// Written by examples/web-notes/setup.py. Query parameters override these values.\n"
        f"window.WEB_NOTES_CONFIG = {json.dumps(config, indent=2)};\n"
    )
    print(f"  config: wrote {path}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", default="http://127.0.0.1:8000/v1", help="API endpoint, with /v1")
    parser.add_argument("--project", required=True, help="project ID")
    parser.add_argument("--key", default=os.environ.get("APPWRITE_KEY", ""), help="API key (or APPWRITE_KEY)")
    parser.add_argument("--database", default="webnotes")
    parser.add_argument("--table", default="notes")
    parser.add_argument("--bucket", default="attachments")
    parser.add_argument("--public-endpoint", default="",
                        help="endpoint the page uses (default: empty = the server that serves the page)")
    parser.add_argument("--no-password-policy", dest="password_policy", action="store_false",
                        help="leave the project's password settings as they are")
    parser.add_argument("--config", type=Path, default=HERE / "dist" / "config.js",
                        help="config.js to write (skipped when its folder does not exist)")
    openid = parser.add_argument_group("OpenID sign-in (optional)")
    openid.add_argument("--oidc-client-id", default="", help="client ID registered at the OpenID provider")
    openid.add_argument("--oidc-discovery-url", default="",
                        help="the provider's /.well-known/openid-configuration URL")
    secret = openid.add_mutually_exclusive_group()
    secret.add_argument("--oidc-secret-file", type=Path, help="file holding the client secret")
    secret.add_argument("--oidc-secret-stdin", action="store_true", help="read the client secret from stdin")
    args = parser.parse_args(argv)
    if not args.key:
        parser.error("an API key is required: --key or APPWRITE_KEY")
    if args.oidc_client_id and not (args.oidc_discovery_url and (args.oidc_secret_file or args.oidc_secret_stdin)):
        parser.error("--oidc-client-id needs --oidc-discovery-url and --oidc-secret-file or --oidc-secret-stdin")

    client = Client().set_endpoint(args.endpoint).set_project(args.project).set_key(args.key)
    missing = []
    print(f"Setting up the notes demo on {args.endpoint} (project {args.project}):")
    policy = set_password_policy(args.project) if args.password_policy else None
    try:
        try:
            setup_tables(TablesDB(client), args.database, args.table)
        except FeatureMissing:
            missing.append("TablesDB (/v1/tablesdb)")
        try:
            setup_storage(Storage(client), args.bucket)
        except FeatureMissing:
            missing.append("Storage (/v1/storage)")
        if args.oidc_client_id:
            setup_openid(args)
    except AppwriteException as exc:
        print(f"error: {exc.message} ({exc.code} {exc.type})", file=sys.stderr)
        return 1
    except (OSError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1

    if args.config.parent.is_dir():
        config = {"endpoint": args.public_endpoint, "project": args.project, "database": args.database,
                  "table": args.table, "bucket": args.bucket}
        if policy:
            config["passwordPolicy"] = policy
        if args.oidc_client_id:
            config["oauth2"] = "oidc"
        write_config(args.config, config)
    else:
        print(f"  config: {args.config.parent} does not exist (build the demo first); pass the IDs as query "
              "parameters instead")
    if missing:
        print("This server does not have: " + ", ".join(missing) + ". The notes demo needs them; sign-up, "
              "log-in and log-out work without.", file=sys.stderr)
        return MISSING
    print("Done.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
