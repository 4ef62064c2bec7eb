"""README.md and the docs held to the project: the layout table names every part of
server/ and every store, every command-line option they name exists, and they
speak of the product as it is, not of how it came to be.

The flags are checked against the parsers themselves (``klondike-race`` with both
sides' subcommands) and, for the
benchmarks and scripts, against their sources; a handful belong to other tools the
docs show (npm, mypy, docker compose), listed below with the tool.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from server.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "deploy" / "README.md"]

FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
OTHER_TOOLS = {"--prefix": "npm install", "--strict": "mypy", "--build": "docker compose"}
# server/store/'s modules that are stores, and the word the layout table calls each.
STORES = {"memory.py": "in memory", "sqlite.py": "SQLite", "redis.py": "Redis"}
NOT_STORES = {
    "__init__.py",
    "base.py",
    "redis_conn.py",
    "redis_scripts.py",
    "sqlite_file.py",
}  # interface, connections, bases


def parsers() -> list[argparse.ArgumentParser]:
    """``klondike-race`` (server/cli.py ``build_parser``) and each subcommand's parser."""
    top = build_parser()
    (sub,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    return [top, *sub.choices.values()]


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {s for action in parser._actions for s in action.option_strings}


def serve_options() -> set[str]:
    (serve,) = [p for p in parsers() if p.prog.endswith(" serve")]
    return options(serve)


def layout_table() -> dict[str, str]:
    """README's "Layout" table: each path cell's paths, and the row's text."""
    section = README.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = line.split(" | ")
        if line.startswith("| `") and len(cells) == 2:
            for path in re.findall(r"`([^`]+)`", cells[0]):
                rows[path] = cells[1]
    return rows


def test_the_layout_table_names_every_part_of_server() -> None:
    rows = layout_table()
    parts = sorted(
        f"server/{p.name}/"
        for p in (ROOT / "server").iterdir()
        if p.is_dir() and (p / "__init__.py").exists()
    )
    assert parts and [p for p in parts if p not in rows] == []
    modules = sorted(
        f"server/{p.name}"
        for p in (ROOT / "server").glob("*.py")
        if p.name not in ("__init__.py", "__main__.py")
    )
    assert [m for m in modules if m not in rows] == []
    assert [p for p in rows if not (ROOT / p).exists()] == []


def test_the_layout_table_names_every_store() -> None:
    on_disk = {p.name for p in (ROOT / "server" / "store").glob("*.py")} - NOT_STORES
    assert on_disk == set(STORES)
    row = layout_table()["server/store/"]
    assert [word for word in STORES.values() if word not in row] == []
    assert "default" in row  # the embedded store is serve's default


def serve_flags_in_readme() -> set[str]:
    """The flags README gives as ``serve``'s: its synopsis (the ``klondike-race serve``
    line and the lines that continue it), every paragraph that speaks of
    ``serve``, and the store table's flag column."""
    flags: set[str] = set()
    synopsis = re.search(r"^klondike-race serve .*\n(?:^ +\[.*\n)*", README, re.M)
    assert synopsis is not None
    flags |= set(FLAG.findall(synopsis.group(0).split("#", 1)[0]))
    for paragraph in re.split(r"\n\s*\n", README):
        if "`serve`" in paragraph and "klondike-race bot" not in paragraph:
            flags |= set(FLAG.findall(paragraph))
    store_table = README.split("### What each store keeps", 1)[1].split("\n\n", 2)[1]
    for line in store_table.splitlines():
        cells = line.split(" | ")
        if len(cells) > 2:
            flags |= set(FLAG.findall(cells[1]))
    return flags


def test_every_serve_option_in_readme_exists() -> None:
    named = serve_flags_in_readme()
    assert {"--memory", "--redis", "--data-dir", "--rate-limit"} <= named  # it reads them
    assert sorted(named - serve_options()) == []


def test_every_flag_in_the_docs_exists() -> None:
    known = set().union(*(options(p) for p in parsers()))
    sources = [*sorted((ROOT / "bench").glob("*.py")), *sorted((ROOT / "scripts").glob("*"))]
    text = "\n".join(p.read_text(encoding="utf-8") for p in sources if p.is_file())
    unknown = []
    for doc in DOCS:
        for flag in set(FLAG.findall(doc.read_text(encoding="utf-8"))):
            if flag in known or flag in OTHER_TOOLS:
                continue
            if f'"{flag}"' in text or re.search(rf"(?<![\w-]){flag}(?![\w-])", text):
                continue
            unknown.append(f"{doc.relative_to(ROOT)}: {flag}")
    assert sorted(unknown) == []


# How the project was made is its history's business (git log), not its docs'.
NARRATIVE = re.compile(
    r"\bsessions? \d|\bsession \d's\b|\bthe issue\b|\bissue #?\d|\bdevelopment machine\b"
    r"|\bworktree\b",
    re.I,
)


def test_the_docs_tell_no_story_of_their_making() -> None:
    """The docs, and the benchmarks' sources, whose docstrings are their ``--help``."""
    found = [
        f"{doc.relative_to(ROOT)}:{n}: {line.strip()}"
        for doc in [*DOCS, *sorted((ROOT / "bench").glob("*.py"))]
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
        if NARRATIVE.search(line)
    ]
    assert found == []


def test_every_benchmark_figure_has_its_date() -> None:
    """Each benchmark of README's "Benchmarks" says when it was measured, beside
    the command that measures it."""
    section = README.split("\n## Benchmarks\n", 1)[1].split("\n## ", 1)[0]
    # "**Name** (`the command`...: what it ran; the date):"
    headed = re.findall(r"^\*\*([^*]+)\*\* \((`[^`]+`.*?)\):", section, re.M | re.S)
    assert len(headed) >= 8
    undated = [name for name, note in headed if not re.search(r"\b20\d\d-\d\d-\d\d\b", note)]
    assert undated == []
    uncommanded = [name for name, note in headed if "bench" not in note]
    assert uncommanded == []
