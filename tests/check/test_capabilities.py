"""Capabilities (SKM280–SKM283): tools, bash commands (proved with Z3 strings), paths and URLs inside `allow`."""

from __future__ import annotations

from pathlib import Path

import pytest

import skillc
from skillc.check.capabilities import reaching_constants
from skillc.check.context import undecided
from skillc.ir.toolkit import command_allowed, parse_allowed
from skillc.runtime.places import Places
from skillc.runtime.toolkit import Capabilities
from skillc.syntax.strings import encode_plain
from tests.check.helpers import check_text, codes

# One bash call under an `allow` list; `{command}` is its argument (reads `name`, an input, and `note`, a model's).
BASH = """machine m {{
  use tools std
  allow {allow}
  input name: str
  var note: str
  var out: str
  var status: int
  start think
  model think {{
    writes note
    prompt "Say something."
    -> run
  }}
  tool run {{
    reads name, note
    call bash({call})
    writes out = stdout, status = exit_code
    -> done
  }}
  terminal done: success {{ requires out, status == 0 }}
  fallback
}}
"""


def bash(call: str, allow: str = '"Bash(git diff:*)"') -> str:
    return BASH.format(allow=allow, call=call)


def _diagnostics(text: str, code: str):
    return [d for d in check_text(text).diagnostics if str(d.code) == code]


# ---------------------------------------------------------------- the Z3 prefix proof


@pytest.mark.parametrize("command", [
    '"git diff " ++ quote(name)',
    '"git diff " ++ quote(note) ++ " --stat"',
    '"git diff"',
    '"git diff --cached -- " ++ quote(skill_dir ++ "/x")',
])
def test_commands_that_start_with_the_prefix_are_proved(command: str) -> None:
    # `quote(note)` of model text as an operand of `git diff` is SKM512 (it could be an option): another check's
    assert [c for c in codes(bash(f"command: {command}")) if c != "SKM512"] == []


@pytest.mark.parametrize(("command", "example"), [
    ('name ++ " git diff"', None),
    ('"git difftool " ++ quote(name)', '"git difftool '),     # a whole word: `git diff` does not allow `difftool`
    ('"rm -rf /"', '"rm -rf /"'),
    ("name", None),                                           # an input can be anything
])
def test_commands_that_may_not_are_refuted_with_a_counterexample(command: str, example: str | None) -> None:
    [d] = _diagnostics(bash(f"command: {command}"), "SKM281")
    assert d.severity.name == "ERROR"
    assert d.message == "the bash command of `run` may fall outside the allowed commands (Bash(git diff:*))"
    [witness] = d.witness
    assert witness.startswith("command = ")
    if example is not None:
        assert witness.startswith("command = " + example)
    value = witness[len("command = "):]
    caps, _ = parse_allowed(["Bash(git diff:*)"])
    assert not command_allowed(caps, value.strip('"'))  # the counterexample really is outside
    assert d.secondary and d.secondary[0].span.text().startswith("allow")


GUARDED = """machine m {
  use tools std(bash)
  allow "Bash(git diff:*)", "Bash(git status)"
  var verdict: enum { look, wipe }
  var cmd: str
  var out: str
  start decide
  judge decide {
    writes verdict
    prompt "Look or wipe?"
    when verdict == look -> run { cmd = "git diff --stat" }
    -> run { cmd = OTHER }
  }
  tool run {
    reads cmd
    call bash(command: cmd)
    writes out = stdout
    -> done
  }
  terminal done: success { requires out }
  fallback
}
"""


def test_a_guard_dependent_edge_constant_outside_the_list_is_found() -> None:
    [d] = _diagnostics(GUARDED.replace("OTHER", '"rm -rf /"'), "SKM281")
    assert d.witness == ('command = "rm -rf /"',)


def test_edge_constants_inside_the_list_are_proved() -> None:
    assert codes(GUARDED.replace("OTHER", '"git status"')) == []


def test_exact_commands() -> None:
    allow = '"Bash(make test)"'
    assert codes(bash('command: "make test"', allow)) == []
    [d] = _diagnostics(bash('command: "make test-all"', allow), "SKM281")
    assert d.witness == ('command = "make test-all"',)


def test_a_prefix_entry_with_a_star_but_no_colon() -> None:
    assert codes(bash('command: "npm run build"', '"Bash(npm run*)"')) == []


@pytest.mark.parametrize(("command", "allowed"), [
    ('"npx -y eas-cli@latest workflow:validate " ++ quote(name)', True),
    ('"npx eas-cli@16 build"', True),
    ('"npm install " ++ quote(name)', False),
    ('"npx eas-cli " ++ quote(name)', False),  # no `@` after eas-cli: the middle literal must be there
])
def test_wildcard_entries_match_the_whole_command(command: str, allowed: bool) -> None:
    """`Bash(npx *eas-cli@*)` (Claude Code's wildcard form: each `*` any text) is proved with a Z3 regex."""
    found = _diagnostics(bash(f"command: {command}", '"Bash(npx *eas-cli@*)"'), "SKM281")
    assert (found == []) is allowed
    if not allowed:
        assert found[0].witness and found[0].witness[0].startswith("command = ")


@pytest.mark.parametrize(("folder", "allowed"), [("expo-ui", True), ("vendored__expo-ui", True), ("other", False)])
def test_a_wildcard_entry_for_the_installed_skill_allows_its_script_under_skill_dir(
        tmp_path: Path, folder: str, allowed: bool) -> None:
    """`skill_dir` is a folder of the skill's own name (that of the `source` document's folder, as a run takes it
    by default), so an entry written for the skill where it is installed proves a call of its bundled script; an
    argv is matched joined by spaces, as the runtime matches it. (A command string with `quote(skill_dir ++ …)` is
    not proved: a folder with a space in its path is quoted, and the runtime would refuse that command.)"""
    text = bash('argv: ["node", skill_dir ++ "/scripts/list.js", workdir]', '"Bash(node *expo-ui/scripts/list.js *)"')
    text = text.replace("machine m {", 'machine m {\n  source "SKILL.md"')
    (tmp_path / folder).mkdir()
    checked = skillc.check(text, path=str(tmp_path / folder / "m.skm"))
    found = [d for d in checked.diagnostics if str(d.code) == "SKM281"]
    assert (found == []) is allowed, [d.message for d in found]
    if not allowed:
        assert found[0].witness and found[0].witness[0].startswith("argv = ")
    caps, _ = parse_allowed(["Bash(node *expo-ui/scripts/list.js *)"])  # what the runtime then holds the call to
    assert command_allowed(caps, " ".join(["node", f"/home/u/skills/{folder}/scripts/list.js", "/w"])) is allowed


def test_a_refuted_command_under_wildcard_entries_is_pointed_at_an_argv() -> None:
    """The hint of a command string that only wildcard entries could allow names the form that is proved."""
    text = bash('command: "node " ++ quote(skill_dir ++ "/scripts/list.js") ++ " x"', '"Bash(node *scripts/list.js *)"')
    [d] = _diagnostics(text, "SKM281")
    assert d.hint is not None and "`argv` list" in d.hint and "prefix" not in d.hint
    [d] = _diagnostics(bash('command: "npm install " ++ quote(name)', '"Bash(npm ci)", "Bash(npx *eas-cli@*)"'),
                       "SKM281")
    assert d.hint is not None and "allowed prefix" in d.hint  # a prefix or exact entry could take it


@pytest.mark.parametrize(("path", "source"), [("m.skm", "SKILL.md"), ("machines/m.skm", "../SKILL.md"),
                                              ("ABS/m.skm", "SKILL.md")])
def test_the_skill_folder_is_named_from_the_source_wherever_the_machine_is_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, source: str) -> None:
    """`skill_dir`'s name comes from the `source` document's folder, for a relative path of the machine too."""
    from skillc.check.capabilities import skill_folder_name

    (tmp_path / "expo-ui" / "machines").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "expo-ui")
    text = f'machine m {{\n  source "{source}"\n  start a\n  terminal a: success\n  fallback\n}}\n'
    m = skillc.check(text, path=path.replace("ABS", str(tmp_path / "expo-ui"))).machine
    assert m is not None and skill_folder_name(m, None) == "expo-ui"


def test_an_unrestricted_bash_entry_allows_every_command() -> None:
    assert codes(bash("command: name", '"Bash", "Bash(git diff:*)"')) == []


@pytest.mark.parametrize(("argv", "expected"), [
    ('["git", "diff", name]', []),
    ('["git", "diff"]', []),
    ('["git", "log", name]', ["SKM281"]),
    ('["git"]', ["SKM281"]),
    ('[name, "diff"]', ["SKM281"]),
])
def test_argv_must_start_with_the_prefix_words(argv: str, expected: list[str]) -> None:
    assert codes(bash(f"argv: {argv}")) == expected


def test_an_argv_that_is_not_written_out_cannot_be_proved() -> None:
    text = bash('argv: words').replace("  var note: str\n", "  var note: str\n  input words: list[str]\n")
    [d] = _diagnostics(text.replace("reads name, note", "reads name, note, words"), "SKM281")
    assert "is not a list written out" in d.message


def test_reaching_constants_pin_only_what_every_definition_sets() -> None:
    m = skillc.load(GUARDED.replace("OTHER", '"git status"')).machine
    known = reaching_constants(m)
    assert known["run"]["cmd"] == frozenset({"git diff --stat", "git status"})
    assert known["decide"]["cmd"] == frozenset()  # not assigned yet
    assert known["done"]["out"] is None  # a tool's result: anything


# ---------------------------------------------------------------- tools


def test_a_tool_outside_the_list_is_an_error_citing_the_allow_line() -> None:
    [d] = _diagnostics(bash('command: "git diff"', '"Read", "Grep"'), "SKM280")
    assert d.message == "tool state `run` calls `bash`, which the machine's `allow` list does not name"
    assert d.notes == ("allowed: Read, Grep",)
    assert d.secondary[0].span.text() == 'allow "Read", "Grep"'
    assert 'allow "Bash"' in d.hint


def test_a_declared_tool_is_allowed_by_its_own_name() -> None:
    text = """machine m {
  tool lint(path: str) -> (ok: bool)
  allow ALLOW
  var ok: bool
  start run
  tool run {
    call lint(path: "src")
    writes ok
    -> done
  }
  terminal done: success { requires ok }
  fallback
}
"""
    assert codes(text.replace("ALLOW", '"lint"')) == []
    assert codes(text.replace("ALLOW", '"Read"')) == ["SKM280"]


def test_a_machine_declared_bash_is_checked_like_the_kits() -> None:
    text = bash('command: "rm -rf /"').replace("  use tools std\n",
                                               "  tool bash(command: str) -> (stdout: str, exit_code: int)\n")
    assert codes(text) == ["SKM281"]


def test_without_allow_nothing_is_checked() -> None:
    text = bash('command: "rm -rf /"').replace('  allow "Bash(git diff:*)"\n', "")
    assert codes(text) == []


# ---------------------------------------------------------------- paths and URLs

READ = """machine m {{
  use tools std
  allow {allow}
  input page: str
  var text: str
  start load
  tool load {{
    reads page
    call {call}
    writes text = {result}
    -> done
  }}
  terminal done: success {{ requires text }}
  fallback
}}
"""


@pytest.mark.parametrize(("allow", "call", "expected"), [
    ('"Read(docs/**)"', 'read(path: "docs/a/b.md")', []),
    ('"Read(docs/**)"', 'read(path: "./docs/b.md")', []),
    ('"Read(docs/*.md)"', 'read(path: "docs/a/b.md")', ["SKM282"]),
    ('"Read(docs/**)"', 'read(path: "src/main.py")', ["SKM282"]),
    ('"Read(docs/**)", "Read(src/**)"', 'read(path: "src/main.py")', []),
    ('"Read(docs/**)"', 'read(path: "docs/" ++ page)', ["SKM283"]),
    ('"Read"', 'read(path: page)', []),
])
def test_read_paths(allow: str, call: str, expected: list[str]) -> None:
    assert codes(READ.format(allow=allow, call=call, result="content")) == expected


@pytest.mark.parametrize(("allow", "url", "expected"), [
    ('"WebFetch(domain:example.com)"', '"https://example.com/a"', []),
    ('"WebFetch(domain:example.com)"', '"https://docs.example.com/a"', []),
    ('"WebFetch(domain:example.com)"', '"https://example.org/example.com"', ["SKM282"]),
    ('"WebFetch(domain:example.com)"', '"https://notexample.com/"', ["SKM282"]),
    ('"WebFetch(domain:example.com)"', 'page', ["SKM283"]),
    ('"WebFetch"', 'page', []),
])
def test_fetch_urls(allow: str, url: str, expected: list[str]) -> None:
    assert codes(READ.format(allow=allow, call=f"fetch(url: {url})", result="content")) == expected


def test_a_question_the_solver_gave_up_on_is_marked_undecided() -> None:
    # Refuted within the default budget (above); in 1 ms worth of resource units the solver gives up on it.
    [d] = [d for d in skillc.check(bash('command: name ++ " git diff"'), smt_timeout_ms=1).diagnostics
           if str(d.code) == "SKM283"]
    assert d.message.endswith("the solver could not decide in time") and undecided(d)
    [decided] = _diagnostics(READ.format(allow='"Read(docs/**)"', call='read(path: "docs/" ++ page)', result="content"),
                             "SKM283")
    assert not undecided(decided)  # unprovable by its shape, whatever the budget


def test_unproven_is_a_warning_that_names_the_runtime() -> None:
    [d] = _diagnostics(READ.format(allow='"Read(docs/**)"', call='read(path: "docs/" ++ page)', result="content"),
                       "SKM283")
    assert d.severity.name == "WARNING" and "only the runtime can tell" in d.message
    assert d.notes == ("the runtime refuses a call outside the `allow` list",)


# ---------------------------------------------------------- places in shell text, and the solver's view of the world

PLACE = """machine m {
  use tools std(bash)
  var out: str
  start run
  tool run {
    call bash(command: COMMAND)
    writes out = stdout
    -> done
  }
  terminal done: success { requires out }
  fallback
}
"""


@pytest.mark.parametrize(("command", "expected"), [
    ('"python " ++ quote(skill_dir ++ "/scripts/x.py") ++ " --out " ++ quote(workdir)', []),
    ('"python " ++ skill_dir ++ "/scripts/x.py"', ["SKM510"]),
    ('"ls " ++ workdir', ["SKM510"]),
    ("workdir", []),  # a command that is one value as a whole is deliberate, as before
])
def test_places_are_quoted_in_shell_text_and_need_no_reads(command: str, expected: list[str]) -> None:
    diags = check_text(PLACE.replace("COMMAND", command)).diagnostics
    assert [str(d.code) for d in diags] == expected  # no SKM131: a place needs no `reads`
    if expected:
        assert "is a path the runtime sets" in diags[0].message


def test_world_calls_are_opaque_to_the_solver() -> None:
    from skillc.check.smt import Encoder
    from skillc.ir import expr as ir
    from skillc.ir import types as T

    m = skillc.load(PLACE.replace("COMMAND", '"ls"')).machine
    enc = Encoder(m)
    call = ir.Call(T.BOOL, func="exists", args=(ir.Const(T.STR, value="x"),))
    enc.begin([call])
    assert enc.fires(call) is not None and enc.opaque_exprs == [call]
    text = ir.Call(T.STR, func="file", args=(ir.Const(T.STR, value="x"),))
    assert enc.encode(text).kind == "str"


# ---------------------------------------------------------------- SKM284: shell control the runtime refuses


@pytest.mark.parametrize(("call", "allow", "operator"), [
    ('command: "git diff " ++ quote(name) ++ " > diff.txt"', '"Bash(git diff:*)"', ">"),
    ('command: "git diff && git push"', '"Bash(git diff:*)"', "&&"),
    ('command: "npx eas-cli@latest build " ++ quote(name) ++ " && printf x"', '"Bash(npx *eas-cli@*)"', "&&"),
    ('command: "git diff | head"', '"Bash(git diff:*)"', "|"),
    ('command: "git diff $(cat f)"', '"Bash(git diff:*)"', "$("),
])
def test_shell_control_after_an_allowed_entry_is_refused_before_the_run(call: str, allow: str, operator: str) -> None:
    found = [d for d in check_text(bash(call, allow)).diagnostics if str(d.code) == "SKM284"]
    assert len(found) == 1 and f"({operator})" in found[0].message and found[0].witness


@pytest.mark.parametrize(("call", "allow"), [
    ('command: "git diff " ++ quote(name)', '"Bash(git diff:*)"'),
    ('command: "git diff \'a;b\' \\"x|y\\""', '"Bash(git diff:*)"'),  # quoted: bash does not act on them
    ('command: "git diff > out.txt"', '"Bash(git diff > out.txt)"'),  # exactly allowed
    ('command: "git diff && git push"', '"Bash"'),  # unrestricted
    ('command: "git diff " ++ name', '"Bash(git diff:*)"'),  # a value's own operators are the runtime's to refuse
])
def test_commands_the_runtime_takes_as_they_are_are_not_reported(call: str, allow: str) -> None:
    assert "SKM284" not in codes(bash(call, allow))


def test_the_checker_and_the_runtime_refuse_the_same_commands(tmp_path: Path) -> None:
    """The checker's SKM284 and the runtime's refusal are one decision (`refused_control`)."""
    caps, _ = parse_allowed(["Bash(git diff:*)", "Bash(npx *eas-cli@*)"])
    (tmp_path / "work").mkdir()
    box = Capabilities(caps, Places(tmp_path / "work"))
    for command in ["git diff > x", "npx eas-cli@1 build && printf x", "git diff --stat", "npx eas-cli@1 build"]:
        text = bash(f"command: {encode_plain(command)}", '"Bash(git diff:*)", "Bash(npx *eas-cli@*)"')
        static = "SKM284" in codes(text)
        try:
            box.check("bash", {"command": command})
            refused = False
        except Exception as exc:  # noqa: BLE001 - the runtime's refusal, whatever its class
            refused = "shell control" in str(exc)
        assert static == refused, command
