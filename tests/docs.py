"""The documentation's code blocks, for the tests that run them as written.

The README and the pages of ``docs/`` tell users to run code; the tests take that code from the
pages themselves (never a copy), so an example that stops working fails the suite. Each function
below returns the blocks one test runs; :data:`RUN_BY_TESTS` lists them all, and
``tests/test_docs.py`` checks that every Python block of the documentation is one of them or is
marked ``<!-- not run: <reason> -->`` on the line before it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)
NOT_RUN = "<!-- not run:"


def read(name: str) -> str:
    """The text of ``README.md`` or of a page of ``docs/`` (``"databases.md"``)."""
    return (ROOT / name).read_text() if name == "README.md" else (DOCS / name).read_text()


def section(text: str, heading: str) -> str:
    """The part of ``text`` under the ``## heading`` line, up to the next ``## `` heading."""
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def blocks(text: str, lang: str = "python") -> list[str]:
    """The code blocks of ``text`` in ``lang``, in order (their code, without the fences)."""
    return [m.group(2) for m in FENCE.finditer(text) if m.group(1) == lang]


def expected_lines(code: str) -> list[str]:
    """What a block says it prints: the trailing ``# comment`` of each ``print(`` line."""
    return [line.rsplit("# ", 1)[1].strip() for line in code.splitlines()
            if line.lstrip().startswith("print(") or ("print(" in line and "# " in line)]


# --- the blocks each test runs -----------------------------------------------------------------

def quick_start() -> str:
    """The one-line quick start of the README (also on the Getting started page)."""
    return blocks(section(read("README.md"), "Quick start"), "sh")[0]


def sdk_example() -> str:
    """The README's Python SDK example (also on the Getting started page)."""
    return blocks(section(read("README.md"), "Using it from the Python SDK"))[0]


def getting_started_examples() -> list[str]:
    """The Getting started page's quick start and SDK example, which must equal the README's."""
    page = read("getting-started.md")
    return [blocks(section(page, "Quick start"), "sh")[0], blocks(section(page, "Using it from the Python SDK"))[0]]


def database_examples() -> list[tuple[str, str]]:
    """``(section, code)`` of each Python example of the Databases page (the first is the
    page's introduction, titled ``"Databases"``)."""
    page = read("databases.md")
    out = []
    for part in ("\n## Databases\n" + page.split("\n", 1)[1]).split("\n## ")[1:]:
        title = part.split("\n", 1)[0]
        for code in blocks(part.split("\n## ", 1)[0]):
            out.append((title, code))
    return out


def storage_example() -> str:
    return blocks(read("storage.md"))[0]


def file_token_example() -> str:
    return blocks(read("file-tokens.md"))[0]


def lifecycle_blocks() -> list[str]:
    """The Account lifecycle page's blocks, run in order in one namespace."""
    return blocks(read("account-lifecycle.md"))


def users_and_teams_examples() -> list[str]:
    """The Users and teams page's two SDK examples (users, then teams)."""
    return blocks(read("users-and-teams.md"))


def oauth2_ssr_example() -> str:
    """The server-side-rendering OAuth2 sign-in example."""
    return blocks(read("oauth2.md"))[0]


def messaging_example() -> str:
    return blocks(read("messaging.md"))[0]


def locale_example() -> str:
    return blocks(section(read("locale-avatars-health.md"), "Locale"))[0]


def avatars_example() -> str:
    return blocks(section(read("locale-avatars-health.md"), "Avatars"))[0]


RUN_BY_TESTS = {
    "tests/test_readme.py": lambda: [sdk_example(), *[c for _, c in database_examples()], storage_example(),
                                     file_token_example()],
    "tests/test_docs.py": lambda: [locale_example(), avatars_example()],
    "tests/test_readme_lifecycle.py": lifecycle_blocks,
    "apps/teams/tests/test_readme_examples.py": users_and_teams_examples,
    "apps/accounts/tests/test_oauth2_flow.py": lambda: [oauth2_ssr_example()],
    "apps/messaging/tests/test_docs_example.py": lambda: [messaging_example()],
}
