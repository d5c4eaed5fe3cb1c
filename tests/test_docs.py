"""The README and docs/ say what the command line and the registry say: commands, flags, codes and pages."""

from __future__ import annotations

import re
from collections.abc import Iterator

import click
import pytest

from skillc import registry
from skillc.cli import main
from tests.conftest import ROOT

# docs/diagnostics.md is generated from the registry (a test of its own compares the two).
PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md") if p.name != "diagnostics.md")]
# `skillc CMD` (or `skillc import KIND`) and the rest of its command line, up to the end of the code span,
# a table cell, a comment or the next `skillc`.
COMMAND_LINE = re.compile(r"skillc ((?:import )?[a-z]+)((?: (?!skillc )[^`|\n#]*)?)")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every leaf command under `group`, by its words (`("import", "asl")`)."""
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))
        else:
            yield (*prefix, name), command


COMMANDS = dict(_commands(main))


def _text(page: str) -> str:
    """A page's text, with the `\\|` of Markdown table cells read as the `|` they stand for (kept out of cells)."""
    return (ROOT / page).read_text(encoding="utf-8").replace("\\|", "/")


def _options(command: click.Command) -> set[str]:
    """Every spelling of every option of `command`."""
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts)}


@pytest.mark.parametrize("page", PAGES)
def test_every_flag_shown_exists(page: str) -> None:
    """A `skillc CMD … --flag` in the text names an option CMD has (`skillc CMD --help`)."""
    text = _text(page)
    unknown = []
    for m in COMMAND_LINE.finditer(text):
        command = COMMANDS.get(tuple(m.group(1).split()))
        if command is None:
            continue
        line = text.count("\n", 0, m.start()) + 1
        unknown += [f"{page}:{line}: skillc {m.group(1)} {flag}" for flag in FLAG.findall(m.group(2))
                    if flag not in _options(command)]
    assert not unknown


@pytest.mark.parametrize("page", PAGES)
def test_every_code_cited_exists(page: str) -> None:
    """Each SKMnnn the text cites is in the registry (`skillc explain SKMnnn`)."""
    cited = set(re.findall(r"\bSKM\d{3}\b", _text(page)))
    assert sorted(c for c in cited if c not in registry.BY_CODE) == []


def test_every_command_is_in_the_readme_and_the_docs() -> None:
    """Each command of `skillc --help` has a row in the README and a mention in some docs/ page."""
    readme = _text("README.md")
    docs = "".join(_text(p) for p in PAGES if p != "README.md")
    shown = {words for words in COMMANDS if words[0] != "import"} | {("import",)}
    assert sorted(w for w in shown if f"`skillc {' '.join(w)}" not in readme) == []
    assert sorted(w for w in shown if f"skillc {' '.join(w)}" not in docs) == []


def test_every_docs_page_is_linked_from_the_readme() -> None:
    """The README's list of pages names every docs/*.md, the generated reference included."""
    readme = _text("README.md")
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert [p for p in pages if f"(docs/{p})" not in readme and f"(docs/{p}#" not in readme] == []


def _anchors(page: str) -> set[str]:
    """The heading anchors of a Markdown page, spelled as GitHub spells them."""
    headings = re.findall(r"^#+\s+(.*)$", (ROOT / page).read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_resolves(page: str) -> None:
    """Each relative link names a file that exists, and a `#fragment` into a page names one of its headings."""
    broken = []
    for link in re.findall(r"\]\(([^)\s]+)\)", (ROOT / page).read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", link):
            continue
        path, _, fragment = link.partition("#")
        target = (ROOT / page).parent / path if path else ROOT / page
        if not target.exists():
            broken.append(link)
        elif fragment and target.suffix == ".md" and fragment not in _anchors(str(target.relative_to(ROOT))):
            broken.append(link)
    assert broken == []


def test_every_option_has_help() -> None:
    """`skillc CMD --help` explains every option, not only its type and default."""
    bare = [f"skillc {' '.join(words)} {p.opts[0]}" for words, command in COMMANDS.items()
            for p in command.params if isinstance(p, click.Option) and not p.help]
    assert bare == []
