"""Every reference in the docs and the code points at something that exists in the
project, and none points outside it.

Scanned: docs/*.md, README.md, deploy/*.md and every .py and .js file under
protocol/, server/, client/, bench/ and tests/ (but this one, whose examples are
broken on purpose, and npm's installs: bench/colyseus/node_modules is other
projects' code). Checked:

- a file name ending in ``.md`` (``docs/rules.md``, ``protocol.md``) names a file of
  the project, looked up next to the referring file, then at the root, then in docs/;
- ``NAME.md §N`` (``docs/rules.md §5.4``): that file has a heading numbered N
  (``## 5. Scoring``, ``### 5.4 Timed``). A bare ``§N`` in a Markdown file means a
  section of that file; in code it must say which file;
- ``NAME.md "Heading"`` (``docs/protocol.md "Errors"``): that file has the heading;
- a Markdown link to a local file resolves to a file inside the project (and its
  ``#anchor``, if any, to one of that file's headings);
- nothing names the spec or the rule sheets that live outside the project.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CODE_DIRS = ("protocol", "server", "client", "bench", "tests")

# "docs/rules.md", "protocol.md", "deploy/README.md": a path ending in .md.
MD_FILE = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.md)(?![\w/])")
# What may stand between a file name and its "§N" or "Heading": spaces, line
# breaks, comment markers, a closing backtick, a comma.
GAP = r"[\s`#/*,]*"
SECTION = re.compile(r"§\s*(\d+(?:\.\d+)*)")
FILE_BEFORE = re.compile(r"((?:[\w-]+/)*[\w-]+\.md)" + GAP + r"\Z")
QUOTED_HEADING = re.compile(r"((?:[\w-]+/)*[\w-]+\.md)`?,?(?:\s|#|//)+\"([^\"\n]+)\"")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
# Outside the project: the spec and the rule sheets it digests.
OUTSIDE = re.compile(r"\bRULES\.md\b|\bshared/(?:RULES|seeds)|/work/")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
NUMBERED = re.compile(r"(\d+(?:\.\d+)*)\.?\s")


def sources() -> list[Path]:
    files = [*ROOT.glob("docs/*.md"), ROOT / "README.md", *ROOT.glob("deploy/*.md")]
    for d in CODE_DIRS:
        files += [
            p
            for p in (ROOT / d).rglob("*")
            if p.suffix in (".py", ".js") and "node_modules" not in p.parts  # not ours
        ]
    return sorted(p for p in files if p.is_file() and p != Path(__file__).resolve())


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@cache
def headings(path: Path) -> tuple[str, ...]:
    """The heading texts of a Markdown file, outside fenced code blocks."""
    out: list[str] = []
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if m:
            out.append(m.group(1))
    return tuple(out)


def plain(text: str) -> str:
    return " ".join(text.replace("`", "").split()).lower()


def sections(path: Path) -> set[str]:
    """The numbers of the numbered headings: {"1", "1.1", …, "5.4", …}."""
    return {m.group(1) for h in headings(path) if (m := NUMBERED.match(h))}


def slug(heading: str) -> str:
    """The anchor a Markdown renderer gives a heading (GitHub's rule)."""
    text = re.sub(r"[^\w\- ]", "", plain(heading))
    return text.replace(" ", "-")


def resolve(name: str, where: Path) -> Path | None:
    """The project file a reference from ``where`` names, if there is one."""
    for base in (where.parent, ROOT, ROOT / "docs"):
        path = (base / name).resolve()
        if path.is_relative_to(ROOT) and path.is_file():
            return path
    return None


def check(text: str, where: Path) -> list[str]:
    """Every broken reference in ``text``, the contents of ``where``."""
    errors: list[str] = []
    here = rel(where)

    def line(pos: int) -> str:
        return f"{here}:{text.count(chr(10), 0, pos) + 1}"

    for m in OUTSIDE.finditer(text):
        errors.append(f"{line(m.start())}: {m.group(0)!r} points outside the project")
    for m in MD_FILE.finditer(text):
        if "RULES.md" not in m.group(1) and resolve(m.group(1), where) is None:
            errors.append(f"{line(m.start())}: no file {m.group(1)} in the project")
    for m in SECTION.finditer(text):
        before = FILE_BEFORE.search(text, max(0, m.start() - 200), m.start())
        if before is not None:
            target = resolve(before.group(1), where)
            if target is None:
                continue  # reported above as a missing file
        elif where.suffix == ".md":
            target = where
        else:
            errors.append(f"{line(m.start())}: bare §{m.group(1)}: name the file")
            continue
        if target.suffix != ".md" or m.group(1) not in sections(target):
            errors.append(f"{line(m.start())}: {rel(target)} has no §{m.group(1)}")
    for m in QUOTED_HEADING.finditer(text):
        target = resolve(m.group(1), where)
        if target is not None and plain(m.group(2)) not in map(plain, headings(target)):
            errors.append(f"{line(m.start())}: {rel(target)} has no heading {m.group(2)!r}")
    if where.suffix == ".md":
        for m in LINK.finditer(text):
            url = m.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", url):
                continue  # http:, https:, mailto:
            name, _, anchor = url.partition("#")
            target = where if not name else (where.parent / name).resolve()
            if not target.is_relative_to(ROOT) or not target.exists():
                errors.append(f"{line(m.start())}: link to {url} leads nowhere in the project")
            elif (
                anchor
                and target.suffix == ".md"
                and anchor not in {slug(h) for h in headings(target)}
            ):
                errors.append(f"{line(m.start())}: {rel(target)} has no heading #{anchor}")
    return errors


def test_every_reference_in_docs_and_code_exists_in_the_project() -> None:
    errors: list[str] = []
    for path in sources():
        errors += check(path.read_text(encoding="utf-8"), path)
    assert not errors, "broken references:\n" + "\n".join(errors)


def test_the_scan_sees_the_project() -> None:
    names = {rel(p) for p in sources()}
    assert {"docs/rules.md", "README.md", "protocol/board.py", "client/web/replay.js"} <= names
    assert "tests/test_engine_rules.py" in names and "tests/test_docs_refs.py" not in names
    refs = sum(len(SECTION.findall(p.read_text(encoding="utf-8"))) for p in sources())
    assert refs >= 30, "section references went missing from the scan"


def test_rules_md_numbers_its_sections() -> None:
    numbered = sections(ROOT / "docs" / "rules.md")
    assert {str(n) for n in range(1, 9)} <= numbered
    assert {"2.1", "2.2", "4.11", "5.1", "5.4", "5.7"} <= numbered


BAD = [
    ("see docs/rules.md §42", "has no §42"),
    ("see docs/nothing.md §1", "no file docs/nothing.md"),
    ("as the spec says (RULES" + ".md §3)", "points outside the project"),
    ("read /work/" + "shared/seeds", "points outside the project"),
    ("the rule of §4", "bare §4"),
    ('docs/protocol.md "No such heading"', "has no heading"),
    ("#   docs/rules.md\n#   §19", "has no §19"),
]


@pytest.mark.parametrize(("text", "error"), BAD)
def test_the_checker_catches_a_broken_reference_in_code(text: str, error: str) -> None:
    errors = check(text, ROOT / "protocol" / "example.py")
    assert errors and error in errors[0], errors


GOOD = [
    "see docs/rules.md §5.4 and docs/rules.md §2",
    "// docs/rules.md\n// §8",
    'docs/protocol.md "Room events", docs/protocol.md, "Errors"',
    "``docs/rules.md`` §6 and README.md",
    'files = ["docs/rules.md", "README.md"]',
]


@pytest.mark.parametrize("text", GOOD)
def test_the_checker_accepts_good_references_in_code(text: str) -> None:
    assert check(text, ROOT / "protocol" / "example.py") == []


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("[rules](rules.md), see §4 here", True),
        ("[rules](rules.md#4-play)", True),
        ("[rules](rules.md#no-such-heading)", False),
        ("[outside](../../shared/x.md)", False),
        ("[web](https://example.com/x.md)", True),
        ("see §99 below", False),
    ],
)
def test_the_checker_in_markdown(text: str, ok: bool) -> None:
    assert (check(text, ROOT / "docs" / "rules.md") == []) is ok
