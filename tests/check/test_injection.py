"""SKM510/SKM511: taint that follows the data into bash commands, judged by bash's quoting contexts.

Pass and fail lists over commands and the assignments that build them; the quoting-context table is held
against real `/bin/bash` (a quoted payload either runs or it does not, and the checker must agree).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

import skillc
from skillc.check import shellctx

MACHINE = """machine demo {{
  tool bash(command: str) -> (stdout: str, exit_code: int)
  record Note {{ text: str, n: int }}
  input path: str
  var reply: str
  var note: Note
  var items: list[str]
  var pick: enum {{ a, b }}
  var cmd: str = ""
  var acc: str = ""
  var parts: list[str] = []
  var out: str
  counter n max 2
  start ask
  model ask {{
    writes reply, note, items, pick
    prompt "Answer."
    -> show {{ {assigns} }}
  }}
  tool show {{
    reads reply, note, items, pick, path, cmd, acc, parts
    call bash(command: {command})
    writes out = stdout
    {loop}
    -> done
  }}
  terminal done: success {{ requires out }}
  fallback
}}
"""


def findings(command: str, assigns: str = "cmd = \"true\"", loop: str = "") -> list[tuple[str, str]]:
    """(code, message) of the SKM510/511 findings of the machine."""
    result = skillc.check(MACHINE.format(command=command, assigns=assigns, loop=loop), path="demo.skm")
    assert not [d for d in result.diagnostics if d.is_error and str(d.code) not in ("SKM510", "SKM511")], \
        [d.message for d in result.diagnostics]
    return [(str(d.code), d.message) for d in result.diagnostics if str(d.code) in ("SKM510", "SKM511")]


@pytest.mark.parametrize("command, assigns, loop", [
    ('"printf %s " ++ quote(reply)', 'cmd = "true"', ""),
    ("cmd", 'cmd = "printf %s " ++ quote(reply) ++ " > out.txt"', ""),
    ('"echo " ++ quote(note.text) ++ " " ++ str(note.n)', 'cmd = "true"', ""),
    ('"echo " ++ parts[0]', 'parts = [quote(reply), "x"]', ""),
    ('"echo $(printf %s " ++ quote(reply) ++ ")"', 'cmd = "true"', ""),  # a new context inside $(…)
    ('"echo \\"$(printf %s " ++ quote(reply) ++ ")\\""', 'cmd = "true"', ""),
    ('"X=" ++ quote(reply) ++ " env"', 'cmd = "true"', ""),
    ('"echo " ++ acc', 'acc = ""', 'when n < 2 -> show { n += 1, acc = acc ++ " " ++ quote(reply) }'),
    ('"echo " ++ pick ++ " " ++ path', 'cmd = "true"', ""),  # an enum label and an input
    ('"echo " ++ trusted(reply)', 'cmd = "true"', ""),  # the explicit opt-out
    ('"sh -c " ++ quote(trusted(reply))', 'cmd = "true"', ""),  # code on purpose, one word for the shell
    ("reply", 'cmd = "true"', ""),  # one untrusted value as the whole command: deliberate
    ('"cat <<\'EOF\'\\nhi\\nEOF\\necho " ++ quote(reply)', 'cmd = "true"', ""),  # after the here-document
])
def test_safe_commands_pass(command: str, assigns: str, loop: str) -> None:
    assert findings(command, assigns, loop) == []


@pytest.mark.parametrize("command, assigns, loop, code, context", [
    # the issue: model text assembled on an edge, then the variable is the command
    ("cmd", 'cmd = "printf %s " ++ reply ++ " > out.txt"', "", "SKM510", ""),
    # the issue: quote() inside double quotes lets $(…) in the reply run
    ('"echo \\"reply: " ++ quote(reply) ++ "\\""', 'cmd = "true"', "", "SKM511", "inside double quotes"),
    ('"echo \'" ++ quote(reply) ++ "\'"', 'cmd = "true"', "", "SKM511", "inside single quotes"),
    ('"cat <<EOF\\n" ++ quote(reply) ++ "\\nEOF"', 'cmd = "true"', "", "SKM511", "in a here-document"),
    ('"echo `echo " ++ quote(reply) ++ "`"', 'cmd = "true"', "", "SKM511", "inside backquotes"),
    ('"echo \\\\" ++ quote(reply)', 'cmd = "true"', "", "SKM511", "right after `\\`"),
    ('"echo $" ++ quote(reply)', 'cmd = "true"', "", "SKM511", "right after `$`"),
    ('"eval " ++ quote(reply)', 'cmd = "true"', "", "SKM511", "as code `eval` runs"),
    ('"bash -c " ++ quote(reply)', 'cmd = "true"', "", "SKM511", "as code `bash -c` runs"),
    ('"true; " ++ quote(reply) ++ " x"', 'cmd = "true"', "", "SKM511", "as the program the command runs"),
    ('"# note " ++ quote(reply) ++ "\\necho"', 'cmd = "true"', "", "SKM511", "in a comment"),
    ('"echo $((1 + " ++ quote(reply) ++ "))"', 'cmd = "true"', "", "SKM511", "inside arithmetic"),
    # taint through records, lists, loops and interpolation
    ('"echo " ++ note.text', 'cmd = "true"', "", "SKM510", ""),
    ('"echo " ++ items[0]', 'cmd = "true"', "", "SKM510", ""),
    ('"echo " ++ parts[1]', 'parts = [quote(reply), reply]', "", "SKM510", ""),
    ('"echo " ++ acc', 'acc = ""', 'when n < 2 -> show { n += 1, acc = acc ++ " " ++ reply }', "SKM510", ""),
    ('"echo " ++ cmd', 'cmd = "\\"" ++ quote(reply) ++ "\\""', "", "SKM511", "inside double quotes"),
    ('"echo " ++ str(reply)', 'cmd = "true"', "", "SKM510", ""),
    ("reply ++ \" x\"", 'cmd = "true"', "", "SKM510", ""),  # more than the whole command
])
def test_unsafe_commands_are_errors(command: str, assigns: str, loop: str, code: str, context: str) -> None:
    found = findings(command, assigns, loop)
    assert found and found[0][0] == code, found
    assert context in found[0][1]


def test_the_witness_names_the_source_the_assignment_and_the_call() -> None:
    text = MACHINE.format(command="cmd", assigns='cmd = "printf %s " ++ reply ++ " > out.txt"', loop="")
    [d] = [d for d in skillc.check(text, path="demo.skm").diagnostics if str(d.code) == "SKM510"]
    assert d.message.startswith("`cmd` carries `reply`")
    assert d.witness[0] == "`reply` is written by the model in `ask`"
    assert "edge `ask` → `show`" in d.witness[1] and "cmd = " in d.witness[1]
    assert "bash command of `show`" in d.witness[-1]
    assert d.span is not None and text[d.span.start:d.span.end] == "reply"  # where `quote()` goes
    assert "quote(reply)" in (d.hint or "")


def test_a_place_may_name_the_program_but_not_sit_inside_double_quotes() -> None:
    place = MACHINE.replace("  input path: str\n", "  input path: str\n")
    ok = skillc.check(place.format(command='quote(skill_dir ++ "/run.sh") ++ " go"', assigns='cmd = "x"', loop=""),
                      path="demo.skm")
    assert not [d for d in ok.diagnostics if str(d.code).startswith("SKM51")]
    bad = skillc.check(place.format(command='"cd \\"" ++ quote(skill_dir) ++ "\\""', assigns='cmd = "x"', loop=""),
                       path="demo.skm")
    assert [str(d.code) for d in bad.diagnostics if str(d.code).startswith("SKM51")] == ["SKM511"]


# ---------------------------------------------------------------- the context table against real bash

BASH = shutil.which("bash") or "/bin/bash"

#: (text before, text after) a quoted value: every row bash actually reads.
CONTEXTS = [
    ("printf %s ", ""), ("echo \"reply: ", "\""), ("echo '", "'"), ("cat <<EOF\n", "\nEOF"),
    ("cat <<'EOF'\n", "\nEOF"), ("echo `echo ", "`"), ("echo \\", ""), ("echo $", ""), ("eval ", ""),
    ("bash -c ", ""), ("sh -c ", " x"), ("env ", " PWNED"), ("true; ", " PWNED"), ("# ", "\necho"),
    ("echo $((1 + ", "))"), ("echo $(printf %s ", ")"), ("echo \"$(printf %s ", ")\""), ("X=", " true"),
    ("echo a=", ""), ("printf %s x", "y"), ("find . -maxdepth 0 -exec ", " PWNED \\;"), ("echo >", ""),
    ("cat <<'EOF'\nhi\nEOF\necho ", ""), ("xargs ", " PWNED </dev/null"), ("echo ${X:-", "}"),
    ("let ", ""), ("[[ ", " -eq 1 ]]"), ("printf -v ", " x"), ("declare -i x=", ""), ("read ", " </dev/null"),
    ("test -v ", ""), ("declare X=", ""), ("export X=", ""), ("printf -v x %s ", ""), ("[ ", " = x ]"),
]
#: Rows the checker refuses though bash reads them safely: `${X:-…}` outside double quotes (inside them the
#: single quotes would be literal; the lexer does not tell the two apart).
CONSERVATIVE = {("echo ${X:-", "}")}
PAYLOADS = ["$(touch PWNED)", "'; touch PWNED; '", "\ntouch PWNED\n", "x\nEOF\ntouch PWNED\n", "touch",
            "`; touch PWNED; echo `", "1 + a[$(touch PWNED)]", "touch PWNED", "x' ; touch PWNED #",
            "\\'\"; touch PWNED; #", "a[$(touch PWNED)]"]


def _runs(command: str, folder: Path) -> bool:
    """Does bash create PWNED running `command` in `folder`?"""
    subprocess.run([BASH, "-c", command], cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    return (folder / "PWNED").exists()


@pytest.mark.parametrize("before, after", CONTEXTS)
def test_the_quoting_contexts_agree_with_real_bash(before: str, after: str, tmp_path: Path) -> None:
    safe = shellctx.quoted_context(shellctx.feed(shellctx.START, before)) is None
    ran = []
    for i, payload in enumerate(PAYLOADS):
        folder = tmp_path / str(i)
        folder.mkdir()
        if _runs(before + shlex.quote(payload) + after, folder):
            ran.append(payload)
    if safe:
        assert ran == [], f"judged safe, yet bash ran {ran!r}"
    elif (before, after) in CONSERVATIVE:
        assert ran == []  # a known false positive, documented in docs/checks.md
    else:
        assert ran, "judged unsafe, but no payload ran: a false positive (or a payload missing from the list)"


# ---------------------------------------------------------------- the quick fix


@pytest.mark.parametrize("command, offered", [
    ('"printf %s " ++ reply', True),
    ('"echo \\"reply: " ++ reply ++ "\\""', False),  # quote() inside "…" would not protect it (SKM511)
])
def test_the_quote_quick_fix_is_offered_only_where_quoting_protects(command: str, offered: bool) -> None:
    from skillc.lsp.actions import quote_value

    text = MACHINE.format(command=command, assigns='cmd = "true"', loop="")
    [d] = [d for d in skillc.check(text, path="demo.skm").diagnostics if str(d.code) == "SKM510"]
    fix = quote_value(text, d)
    assert (fix is not None) == offered
    if fix is not None:
        start, end, new = fix[1]
        fixed = text[:start] + new + text[end:]
        assert not [x for x in skillc.check(fixed, path="demo.skm").diagnostics if str(x.code).startswith("SKM51")]


def test_each_use_is_reported_where_it_stands() -> None:
    text = MACHINE.format(command='"echo " ++ reply ++ "; echo " ++ note.text ++ "; echo " ++ reply',
                          assigns='cmd = "true"', loop="")
    found = [d for d in skillc.check(text, path="demo.skm").diagnostics if str(d.code) == "SKM510"]
    spans = sorted(text[d.span.start:d.span.end] for d in found if d.span is not None)
    assert spans == ["note.text", "reply", "reply"]


def test_many_sources_at_one_place_are_one_finding() -> None:
    """A value that 30 model states may write is one SKM510 where it lands (not 30): its witness follows the first
    source in the file and a note counts and names the others."""
    asks = "".join(f"""  model ask{i} {{
    writes reply
    prompt "Answer {i}."
    -> {f"ask{i + 1}" if i < 29 else "show"}
  }}
""" for i in range(30))
    text = f"""machine many {{
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var reply: str
  var out: str
  start ask0
{asks}  tool show {{
    reads reply
    call bash(command: "echo " ++ reply ++ " > a.txt")
    writes out = stdout
    -> done
  }}
  terminal done: success {{ requires out }}
  fallback
}}
"""
    found = [d for d in skillc.check(text, path="many.skm").diagnostics if str(d.code) == "SKM510"]
    assert len(found) == 1, [d.message for d in found]
    (d,) = found
    assert d.witness[0] == "`reply` is written by the model in `ask0`", d.witness
    named = "; ".join(f"`reply` is written by the model in `ask{i}`" for i in (1, 2, 3))
    assert list(d.notes) == [f"29 other sources reach this place the same way: {named}; and 26 more"], d.notes


# ---------------------------------------------------------------- SKM512: a quoted value read as an option

OPTION_MACHINE = """machine demo {{
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var name: str
  var out: str
  start ask
  model ask {{
    writes name
    prompt "Name a file."
    -> show
  }}
  tool show {{
    reads name
    call bash(command: {cmd})
    writes out = stdout
    -> done
  }}
  terminal done: success {{ requires out }}
  fallback
}}
"""


@pytest.mark.parametrize("cmd, reported", [
    ('"cat " ++ quote(name)', True),
    ('"curl -o out.txt " ++ quote(name)', True),  # `out.txt` is the option's value; the next word is an operand
    ('"echo hi; cat " ++ quote(name)', True),  # a new command after `;`
    ('"cat -- a; rm " ++ quote(name)', True),  # `--` ends the options of its own command only
    ('"cat " ++ quote(name) ++ " > out.txt"', True),
    ('"cat -- " ++ quote(name)', False),
    ('"git commit -m " ++ quote(name)', False),  # the value of `-m`
    ('"printf %s " ++ quote(name)', False),  # printf's arguments after its format are data
    ('"ls ./" ++ quote(name)', False),  # the word begins with `./`
    ('"cat < " ++ quote(name)', False),  # a redirection's target
    ('"x=" ++ quote(name) ++ " cat"', False),  # an assignment's value
])
def test_a_quoted_operand_that_could_be_an_option_is_a_warning(cmd: str, reported: bool) -> None:
    found = [d for d in skillc.check(OPTION_MACHINE.format(cmd=cmd), path="d.skm").diagnostics
             if str(d.code).startswith("SKM51")]
    assert [str(d.code) for d in found] == (["SKM512"] if reported else [])
    if reported:
        (d,) = found
        assert d.severity.name == "WARNING" and "`--`" in (d.hint or "") and d.witness


def test_the_option_it_warns_of_is_real_and_double_dash_ends_it(tmp_path: Path) -> None:
    """What SKM512 is about, with real bash and coreutils: the same quoted value is an option after `cat` and a
    file name after `cat --`."""
    value = shlex.quote("--version")
    read_as_option = subprocess.run(["/bin/bash", "-c", f"cat {value}"], capture_output=True, text=True,
                                    cwd=tmp_path, timeout=30)
    assert read_as_option.returncode == 0 and "cat" in read_as_option.stdout  # cat printed its version
    read_as_file = subprocess.run(["/bin/bash", "-c", f"cat -- {value}"], capture_output=True, text=True,
                                  cwd=tmp_path, timeout=30)
    assert read_as_file.returncode != 0 and "--version" in read_as_file.stderr  # no such file


def test_the_words_of_a_for_loop_are_not_operands() -> None:
    cmd = '"for t in " ++ quote(name) ++ "; do printf %s \\"$t\\"; done"'
    assert [str(d.code) for d in skillc.check(OPTION_MACHINE.format(cmd=cmd), path="d.skm").diagnostics
            if str(d.code).startswith("SKM51")] == []
