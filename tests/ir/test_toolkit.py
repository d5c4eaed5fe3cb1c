"""Lowering the language of wave 3: `use tools`, `allow`, the places and evidence predicates."""

from __future__ import annotations

import pytest

from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.names import PLACE_NAMES
from skillc.ir.toolkit import KIT, KIT_NAMES, KIT_SOURCE, PLACES, Capability, parse_allowed
from skillc.syntax.parser import parse
from tests.conftest import codes, load_text

RETRY = 'import "stdlib/retry.skm"\n'

THINK = """
  var answer: str
  start think
  model think {
    writes answer
    prompt "Answer."
    -> done
  }
  terminal done: success { requires answer }
"""


def _machine(body: str, head: str = "") -> str:
    return head + "machine m {\n" + body + "\n  fallback\n}\n"


def _load(body: str, head: str = ""):
    return load_text(_machine(body, head))


# ---------------------------------------------------------------- use tools


def test_use_tools_std_takes_the_whole_kit() -> None:
    result = _load("  use tools std\n" + THINK)
    assert result.diagnostics == []
    m = result.machine
    assert m.kit == KIT_NAMES
    assert {name: (t.params, t.results) for name, t in m.tools.items()} == \
        {name: (t.params, t.results) for name, t in KIT.items()}


def test_a_subset_takes_only_the_tools_it_names() -> None:
    m = _load("  use tools std(read, bash)\n" + THINK).machine
    assert m.kit == ("read", "bash") and list(m.tools) == ["read", "bash"]


def test_kit_signatures_agree_with_their_source_text() -> None:
    """KIT_SOURCE (the docs' and the prompts' spelling) declares exactly the KIT's signatures."""
    body = "\n".join(f"  {KIT_SOURCE[name]}" for name in KIT_NAMES)
    m = _load(body + THINK).machine
    for name in KIT_NAMES:
        assert (m.tools[name].params, m.tools[name].results) == (KIT[name].params, KIT[name].results), name


def test_a_machine_still_declares_its_own_bash() -> None:
    m = _load("  tool bash(command: str) -> (stdout: str, exit_code: int)\n" + THINK).machine
    assert m.kit == () and m.tools["bash"].params == (("command", T.STR),)


def test_declaring_a_kit_tool_and_taking_it_is_a_duplicate() -> None:
    result = _load("  tool bash(command: str) -> (stdout: str)\n  use tools std\n" + THINK)
    dup = [d for d in result.diagnostics if str(d.code) == "SKM108"]
    assert len(dup) == 1 and "tool `bash` is declared twice" in dup[0].message
    assert dup[0].secondary  # points at the first declaration
    assert codes(_load("  use tools std(read)\n  use tools std(read, write)\n" + THINK).diagnostics) == ["SKM108"]


@pytest.mark.parametrize(("line", "message", "hint"), [
    ("use tools std(read, bsh)", "the kit `std` has no tool `bsh`", "did you mean `bash`?"),
    ("use tools std(search)", "the kit `std` has no tool `search`", "declare others"),
    ("use tools stdd", "there is no tool kit `stdd`", "did you mean `std`?"),
])
def test_unknown_kits_and_kit_tools(line: str, message: str, hint: str) -> None:
    result = _load(f"  {line}\n" + THINK)
    [d] = result.diagnostics
    assert str(d.code) == "SKM141" and d.message == message and hint in (d.hint or "")
    assert d.span is not None and d.span.text() in line and d.span.text() != line


def test_use_tools_and_fragment_instances_live_side_by_side() -> None:
    text = _machine("""
  use tools std(bash)
  input cmd: str
  var page: str
  start fetch
  use retry as fetch(command: cmd, output: page) -> (ok: done, failed: fallback)
  terminal done: success { requires page }
""", RETRY)
    result = load_text(text)
    assert result.diagnostics == [], codes(result.diagnostics)
    # the kit's bash (optional command, argv, cwd, timeout; stderr too) serves a fragment's narrower bash
    assert result.machine.states["fetch.run"].call.tool == "bash"


def test_a_fragment_called_tools_can_still_be_used() -> None:
    module, diags = parse("fragment tools() -> (out) {\n  start out\n}\n"
                          "machine m {\n  start a\n  use tools as a() -> (out: done)\n"
                          "  terminal done: success\n  fallback\n}\n")
    assert diags == []
    use = module.machines[0].items[1]
    assert (use.fragment, use.name) == ("tools", "a")


def test_a_narrower_tool_does_not_serve_a_fragment_that_needs_more() -> None:
    text = _machine("""
  tool bash(command: str, cwd: str) -> (stdout: str, exit_code: int)
  input cmd: str
  var page: str
  start fetch
  use retry as fetch(command: cmd, output: page) -> (ok: done, failed: fallback)
  terminal done: success { requires page }
""", RETRY)
    assert codes(load_text(text).diagnostics) == ["SKM128"]  # `cwd` is required but the fragment never passes it


# ---------------------------------------------------------------- allow


def test_allow_lines_add_up_and_split_like_front_matter() -> None:
    m = _load('  allow "Read", "Grep"\n  allow "Bash(git diff:*) WebFetch(domain:Example.com)"\n' + THINK).machine
    assert [c.spelling for c in m.allowed] == ["Read", "Grep", "Bash(git diff:*)", "WebFetch(domain:Example.com)"]
    assert m.allowed[2] == Capability("Bash(git diff:*)", "bash", prefix="git diff")
    assert m.allowed[3].domain == "example.com"
    assert len(m.allow_spans) == 2


def test_a_machine_without_allow_has_no_capability_set() -> None:
    assert _load(THINK).machine.allowed == ()


@pytest.mark.parametrize("entry", ["Bash(git diff:*", "WebFetch(example.com)", "9lives", ""])
def test_malformed_allow_entries_are_errors(entry: str) -> None:
    result = _load(f'  allow "Read", "{entry}"\n' + THINK)
    [d] = result.diagnostics
    assert str(d.code) == "SKM142" and d.span is not None and d.span.text() == f'"{entry}"'
    assert [c.spelling for c in result.machine.allowed] == ["Read"]


def test_an_entry_skillc_cannot_run_is_a_note_and_is_kept() -> None:
    result = _load('  allow "Read", "WebSearch"\n' + THINK)
    [d] = result.diagnostics
    assert str(d.code) == "SKM143" and d.severity.name == "NOTE" and "`WebSearch`" in d.message
    assert [c.spelling for c in result.machine.allowed] == ["Read", "WebSearch"]


def test_an_entry_for_a_tool_the_machine_declares_is_no_note() -> None:
    result = _load('  tool lint(path: str) -> (ok: bool)\n  allow "lint"\n' + THINK)
    assert result.diagnostics == []
    assert result.machine.allowed == (Capability("lint", "lint", known=False),)


def test_a_fragment_has_no_allow() -> None:
    result = load_text('fragment f() -> (out) {\n  allow "Read"\n  start out\n}\n')
    assert codes(result.diagnostics) == ["SKM119"]
    assert "the capability set of the machine that uses it" in result.diagnostics[0].message


# ---------------------------------------------------------------- places


def test_places_are_variables_only_when_named() -> None:
    m = _load(THINK).machine
    assert not PLACE_NAMES & set(m.variables)
    m = _load(THINK.replace("writes answer", "reads workdir\n    writes answer")).machine
    assert m.variables["workdir"].kind == "place" and m.variables["workdir"].type == T.STR
    assert m.variables["workdir"].defined_at_start
    assert "skill_dir" not in m.variables
    assert list(m.variables)[-1] == "workdir"  # after the declared ones: their order is unchanged
    assert set(PLACES) == PLACE_NAMES


def test_places_in_expressions() -> None:
    text = _machine("""
  use tools std(bash)
  var out: str
  start run
  tool run {
    call bash(command: "python " ++ quote(skill_dir ++ "/scripts/x.py") ++ " --out " ++ quote(workdir))
    writes out = stdout
    -> done
  }
  terminal done: success { requires out }
""")
    result = load_text(text)
    assert result.diagnostics == [], codes(result.diagnostics)
    assert {"skill_dir", "workdir"} <= set(result.machine.variables)


@pytest.mark.parametrize("declaration", ["var workdir: str", "input skill_dir: str"])
def test_a_variable_cannot_take_a_place_name(declaration: str) -> None:
    result = _load(f"  {declaration}\n" + THINK)
    [d] = result.diagnostics
    assert str(d.code) == "SKM134" and "is a place the runtime sets" in d.message and "read-only" in d.hint


@pytest.mark.parametrize("change", [
    ("writes answer", "writes answer, workdir"),
    ("-> done", '-> done { skill_dir = "x" }'),
])
def test_places_cannot_be_written(change: tuple[str, str]) -> None:
    result = _load(THINK.replace(*change))
    [d] = result.diagnostics
    assert str(d.code) == "SKM134" and "cannot be written" in d.message


def test_a_place_misspelt_gets_a_suggestion() -> None:
    [d] = _load(THINK.replace("writes answer", "reads workdri\n    writes answer")).diagnostics
    assert str(d.code) == "SKM103" and d.hint == "did you mean `workdir`?"


# ---------------------------------------------------------------- evidence predicates


def test_requires_keeps_names_and_lowers_predicates() -> None:
    text = _machine("""
  use tools std(bash)
  var choice: enum { A, B }
  var status: int
  start write
  tool write {
    reads choice
    call bash(command: "printf %s " ++ str(choice) ++ " > answer.txt")
    writes status = exit_code
    -> done
  }
  terminal done: success { requires choice, status == 0, exists("answer.txt"), file("answer.txt") == str(choice) }
""")
    result = load_text(text)
    assert result.diagnostics == [], codes(result.diagnostics)
    done = result.machine.states["done"]
    assert done.requires == ("choice",)
    assert len(done.predicates) == 3 and all(p.type == T.BOOL for p in done.predicates)
    world = [x for p in done.predicates for x in ir.walk(p) if isinstance(x, ir.Call) and x.func in ("exists", "file")]
    assert [c.func for c in world] == ["exists", "file"]
    assert world[1].type == T.STR


def test_a_record_field_in_requires_is_a_predicate() -> None:
    text = _machine("""
  record R { ok: bool }
  var r: R
  start think
  model think {
    writes r
    prompt "Answer."
    -> done
  }
  terminal done: success { requires r, r.ok }
""")
    result = load_text(text)
    assert result.diagnostics == []
    assert result.machine.states["done"].requires == ("r",)
    assert len(result.machine.states["done"].predicates) == 1


def test_a_predicate_must_be_bool() -> None:
    [d] = _load(THINK.replace("requires answer", "requires answer, len(answer)")).diagnostics
    assert str(d.code) == "SKM111" and d.message == "this evidence predicate is int, not bool"


def test_an_undeclared_name_in_requires_is_still_undefined() -> None:
    [d] = _load(THINK.replace("requires answer", "requires answr")).diagnostics
    assert str(d.code) == "SKM103" and d.message == "undefined variable `answr` in `requires`"


@pytest.mark.parametrize(("where", "text"), [
    ("guard", THINK.replace("-> done", 'when exists("x") -> done\n    -> done')),
    ("assignment", "  var seen: bool\n" + THINK.replace("-> done", '-> done { seen = exists("x") }')),
    ("argument", '  tool t(p: str) -> (r: str)\n  var out: str\n  start c\n  tool c {\n    call t(p: file("a"))\n'
                 "    writes out = r\n    -> done\n  }\n  terminal done: success { requires out }\n"),
])
def test_world_functions_are_only_for_requires(where: str, text: str) -> None:
    diags = _load(text).diagnostics
    assert codes(diags) == ["SKM144"], where
    assert "read the file in a tool state" in diags[0].hint


@pytest.mark.parametrize(("evidence", "message"), [
    ('exists("a", "b")', "`exists` takes 1 argument, got 2"),
    ("exists(3)", "`exists` takes a str path, not int"),
    ('exist("a")', "unknown function `exist`"),
])
def test_world_function_calls_are_typed(evidence: str, message: str) -> None:
    [d] = _load(THINK.replace("requires answer", f"requires answer, {evidence}")).diagnostics
    assert str(d.code) == "SKM130" and d.message == message
    if evidence.startswith("exist("):
        assert d.hint == "did you mean `exists`?"


def test_the_fallback_still_requires_nothing() -> None:
    result = _load(THINK).machine
    assert result.fallback.predicates == ()


def test_a_fragment_may_name_places_and_keeps_them_unrenamed() -> None:
    text = """fragment save(content: str) -> (ok) {
  use tools std(write)
  var h: str
  start w
  tool w {
    reads content
    call write(path: workdir ++ "/out.txt", content: content)
    writes h = sha256
    -> ok
  }
}
machine m {
  use tools std(write)
  input text: str
  start s
  use save as s(content: text) -> (ok: done)
  terminal done: success { requires text }
  fallback
}
"""
    result = load_text(text)
    assert result.diagnostics == []
    m = result.machine
    assert "workdir" in m.variables and "s.workdir" not in m.variables
    assert "workdir" not in result.fragments["save"].variables
    assert ir.variables(dict(m.states["s.w"].call.args)["path"]) == {"workdir"}


@pytest.mark.parametrize(("entry", "kind", "value"), [
    ("Bash(git diff:*)", "prefix", "git diff"),
    ("Bash(ls *)", "prefix", "ls "),
    ("Bash(npx *eas-cli@*)", "pattern", "npx *eas-cli@*"),
    ("Bash(git * main)", "pattern", "git * main"),
    ("Bash(echo a\\*b)", "command", "echo a*b"),  # an escaped star is a star
])
def test_bash_entries_are_prefixes_exact_commands_or_wildcards(entry: str, kind: str, value: str) -> None:
    from skillc.ir.toolkit import parse_capability

    cap = parse_capability(entry)
    assert not isinstance(cap, str) and getattr(cap, kind) == value


@pytest.mark.parametrize(("draft", "granted", "wider"), [
    (["Bash(git diff:*)", "Bash(git * main)", "Bash(git log)"], ["Bash(git:*)"], []),
    (["Bash(npx -y eas-cli@latest workflow:validate:*)"], ["Bash(npx *eas-cli@*)"], []),
    (["Read", "Glob", "Grep", "AskUserQuestion"], ["Bash(node:*)"], []),  # they change nothing
    (["Bash"], ["Bash(git:*)"], ["Bash"]),
    (["Bash(rm:*)", "Edit"], ["Bash(git:*)", "Write"], ["Bash(rm:*)", "Edit"]),
    (["Bash(gi*t)"], ["Bash(gi:*)"], ["Bash(gi*t)"]),  # `*` may run on into `giant`: not inside `gi` as a word
    (["Bash(npx a:*)"], ["Bash(npx *x*)"], ["Bash(npx a:*)"]),  # `npx a b` holds no x
    (["Read(docs/**)"], ["Read(src/**)"], []),
    (["Write(docs/**)"], ["Write(src/**)"], ["Write(docs/**)"]),
])
def test_what_an_allow_list_adds_beyond_a_grant(draft: list[str], granted: list[str], wider: list[str]) -> None:
    from skillc.ir.toolkit import beyond

    caps, _ = parse_allowed(draft)
    assert [c.spelling for c in beyond(caps, parse_allowed(granted)[0])] == wider
