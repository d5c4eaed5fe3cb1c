"""Every diagnostic code: registered once, documented, triggered by its example with the right message."""

from __future__ import annotations

import re

import pytest

import skillc
from skillc.diagnostics.docs import markdown_reference
from skillc.registry import ALL, BY_CODE, lookup
from tests.conftest import ROOT, codes

RUNNABLE = [c for c in BY_CODE.values() if c.runnable]

# What each code's example must say: code -> regex over the message.
MESSAGES = {
    "SKM002": r"unexpected character `;`",
    "SKM003": r"string is not closed",
    "SKM004": r"unexpected name `stdout`",
    "SKM005": r"file ends before",
    "SKM006": r"unknown escape sequence `\\q`",
    "SKM007": r"nested more than 100 levels",
    "SKM008": r"comparisons cannot be chained",
    "SKM009": r"unexpected name `write` inside a state",
    "SKM010": r"unexpected name `variable` inside a machine",
    "SKM011": r"edge has no target state",
    "SKM012": r"type is missing or malformed",
    "SKM013": r"expression is missing",
    "SKM014": r"rule has no quotation",
    "SKM015": r"missing `->` between the guard and the target",
    "SKM016": r"unexpected `var` at the top level",
    "SKM017": r"the number `1e999` is too large",
    "SKM100": r"declares no machine, fragment or type",
    "SKM101": r"second machine `other`",
    "SKM102": r"undefined state `dne`",
    "SKM103": r"undefined variable `answr`",
    "SKM104": r"undefined tool `bash`",
    "SKM105": r"`complet` is not a label of enum \{ complete, incomplete \}",
    "SKM106": r"undefined type `string`",
    "SKM107": r"undefined fragment `retry`",
    "SKM108": r"state `think` is declared twice",
    "SKM109": r"cannot compare str with int",
    "SKM110": r"`answer` is str but the value is int",
    "SKM111": r"guard is str, not bool",
    "SKM112": r"tool `bash` has no parameter `cmd`",
    "SKM113": r"argument `command` of `bash` is str, not int",
    "SKM114": r"result `code` is int but `answer` is str",
    "SKM115": r"`demo` has no `start`",
    "SKM116": r"second `start`",
    "SKM117": r"machine `demo` has no fallback",
    "SKM118": r"second `fallback`",
    "SKM119": r"a model state has no `call`",
    "SKM120": r"model state `think` has no `prompt`",
    "SKM121": r"unknown outcome `succes`",
    "SKM122": r"counter `tries` has maximum 0",
    "SKM123": r"map keys must be str, not int",
    "SKM124": r"cannot find `nowhere.skm`",
    "SKM125": r"outside the project root",
    "SKM127": r"does not bind `output`",
    "SKM128": r"parameter `command` of `retry` is str but `count` is int",
    "SKM129": r"fragment instantiates itself: loop -> loop",
    "SKM130": r"unknown function `size`",
    "SKM131": r"reads `cmd`, which the state does not declare",
    "SKM132": r"initial value must be a constant",
    "SKM133": r"`answer` is an input and cannot be written",
    "SKM134": r"`fallback` is reserved",
    "SKM135": r"`\+=` needs a number, but `answer` is str",
    "SKM136": r"line range 9-3 is empty",
    "SKM137": r"state `think` writes counter `tries`",
    "SKM138": r"record `Node` contains itself",
    "SKM139": r"counter `tries` can only be reset to a constant between 0 and 2",
    "SKM140": r"`rule ends` names outcome `finished`",
    "SKM141": r"the kit `std` has no tool `bsh`",
    "SKM142": r"invalid `allow` entry: `Bash\(git diff:\*` is not a tool name",
    "SKM143": r"skillc has no tool `WebSearch`",
    "SKM144": r"`exists` looks at the world, which only a terminal's `requires` may do",
    "SKM145": r"fragment instance `a` routes back to itself without entering a state: a -> a",
    "SKM146": r"`rule forbid fallback` cannot hold",
    "SKM147": r"an integer literal of 4,301 digits is too large",
    "SKM200": r"state `orphan` is unreachable from `start think`",
    "SKM201": r"no terminal can be reached from state `think`",
    "SKM202": r"state `think` has no default edge",
    "SKM203": r"edge 2 of `think` comes after the default edge",
    "SKM210": r"state `think` reads `answer`, which may not be assigned yet",
    "SKM211": r"guard of edge 1 of `think` uses `note`",
    "SKM213": r"terminal `done` requires `note`",
    "SKM220": r"a run can finish without `save`",
    "SKM221": r"`think` can run before `done`",
    "SKM222": r"forbidden operation `think` can run",
    "SKM260": r"a run through `save` can end `success` in `done`, not `failed`",
    "SKM261": r"`think` reads nothing that `save` writes",
    "SKM230": r"judge `check` writes `answer`, which is str, not an enum",
    "SKM231": r"labels `complete`, `incomplete` of `verdict` are routed the same way",
    "SKM240": r"edge 1 of `think` can never fire: its guard is unsatisfiable",
    "SKM241": r"edge 2 of `check` can never fire: earlier edges take every case",
    "SKM242": r"treats this as an opaque value",
    "SKM250": r"the loop think -> check -> think is not bounded by any counter",
    "SKM251": r"edge 1 of `check` can push counter `repairs` past its maximum 2",
    "SKM270": r"success terminal `done` rests on model text only: `answer` is not produced by a tool state",
    "SKM280": r"tool state `run` calls `bash`, which the machine's `allow` list does not name",
    "SKM281": r"the bash command of `run` may fall outside the allowed commands \(Bash\(git diff:\*\)\)",
    "SKM282": r"`load` calls `read` on \"src/main.py\", which no entry allows \(Read\(docs/\*\*\)\)",
    "SKM283": r"cannot prove whether the path of `load` is inside Read\(docs/\*\*\)",
    "SKM284": r"the runtime will refuse the bash command of `run`: it adds shell control \(>\) after what "
              r"`Bash\(git diff:\*\)` allows",
    "SKM510": r"`reply` comes from a model or a tool and is spliced into the bash command of `show` "
              r"without `quote\(\)`",
    "SKM511": r"`quote\(reply\)` is not enough in the bash command of `show`: .* lands inside double quotes",
    "SKM512": r"`quote\(name\)` stands as an operand of `cat` in the bash command of `show`, where a value "
              r"starting with `-` is read as an option",
}


def test_codes_are_well_formed() -> None:
    slugs = set()
    for code, c in BY_CODE.items():
        assert re.fullmatch(r"SKM\d{3}", code)
        assert c.code == code
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", c.slug), c.slug
        assert c.slug not in slugs
        slugs.add(c.slug)
        assert c.summary and c.explanation
        assert lookup(c.slug) is c


def test_every_runnable_code_has_an_expected_message() -> None:
    assert {c.code for c in RUNNABLE} == set(MESSAGES)


def check_text(text: str):
    """Check text as a file at the repository root (stdlib imports resolve)."""
    return skillc.check(text, path=str(ROOT / "case.skm"))


@pytest.mark.parametrize("entry", RUNNABLE, ids=lambda c: c.code)
def test_bad_example_triggers_its_code(entry) -> None:
    result = check_text(entry.bad)
    mine = [d for d in result.diagnostics if str(d.code) == entry.code]
    assert mine, f"{entry.code} not reported; got {codes(result.diagnostics)}"
    d = mine[0]
    assert re.search(MESSAGES[entry.code], d.message), d.message
    assert d.span is not None and d.span.start_pos[0] >= 1
    assert d.severity == entry.severity


@pytest.mark.parametrize("entry", RUNNABLE, ids=lambda c: c.code)
def test_good_example_is_clean(entry) -> None:
    result = check_text(entry.good)
    assert result.diagnostics == [], codes(result.diagnostics)


def test_docs_diagnostics_md_is_generated_from_the_registry() -> None:
    doc = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    assert doc == markdown_reference(ALL), "run `make docs` to regenerate docs/diagnostics.md"
