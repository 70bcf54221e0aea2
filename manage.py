#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import re
import sys

# A table the command needs is missing: SQLite's and PostgreSQL's wording.
_MISSING_TABLE = re.compile(r'no such table: (\S+)|relation "([^"]+)" does not exist')


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")
    from django.core.management import execute_from_command_line
    from django.db.utils import OperationalError, ProgrammingError

    try:
        execute_from_command_line(sys.argv)
    except (OperationalError, ProgrammingError) as exc:
        # A command run before `migrate` (e.g. createproject on a new SQLite file): say so, not a
        # traceback. --traceback keeps Django's own output.
        found = _MISSING_TABLE.search(str(exc))
        if found is None or "--traceback" in sys.argv:
            raise
        from django.db import connection

        where = connection.settings_dict["NAME"]
        sys.stderr.write(f"The database has no table {found.group(1) or found.group(2)} yet ({connection.vendor} "
                         f"database {where}): run `python manage.py migrate` first.\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
