"""The agent tool kit (runtime/toolkit.py, tools.py): read, write, edit, glob, grep, bash, ask_user; capability
sets at run time; effects in the trace. Fetch has its own file (test_fetch.py)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest

import skillc
from skillc.ir.machine import Tool
from skillc.ir.toolkit import KIT, parse_allowed, shell_control
from skillc.ir.types import INT, STR
from skillc.runtime import toolkit
from skillc.runtime.places import Places
from skillc.runtime.record import ToolCall, load_run
from skillc.runtime.toolkit import Capabilities
from skillc.runtime.tools import BashTool, ToolBox, ToolError, ToolResults


def tree_state(folder: Path) -> dict[str, Any]:
    """Everything about a folder a tool could change: each entry's kind, mode, content hash or link target."""
    out: dict[str, Any] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(root) / name
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[str(p)] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[str(p)] = ("dir", st.st_mode)
            else:
                out[str(p)] = ("file", st.st_mode, hashlib.sha256(p.read_bytes()).hexdigest())
    return out


@pytest.fixture
def world(tmp_path: Path) -> Path:
    (tmp_path / "work").mkdir()
    (tmp_path / "skill" / "references").mkdir(parents=True)
    (tmp_path / "skill" / "references" / "guide.md").write_text("use the guide\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret\n")
    return tmp_path


@pytest.fixture
def box(world: Path) -> ToolBox:
    return ToolBox.for_run(None, workdir=world / "work", skill_dir=world / "skill")


def call(box: ToolBox, name: str, **args: Any) -> dict[str, Any]:
    return box.call(KIT[name], args)


# ---------------------------------------------------------------- read


def test_read_returns_text_and_line_ranges(box: ToolBox, world: Path) -> None:
    (world / "work" / "f.txt").write_text("one\ntwo\nthree\nfour")
    assert call(box, "read", path="f.txt") == {"content": "one\ntwo\nthree\nfour", "lines": 4}
    assert call(box, "read", path="f.txt", offset=2, limit=2) == {"content": "two\nthree\n", "lines": 2}
    assert call(box, "read", path="f.txt", offset=4) == {"content": "four", "lines": 1}
    assert call(box, "read", path="f.txt", offset=9) == {"content": "", "lines": 0}
    assert call(box, "read", path=str(world / "skill" / "references" / "guide.md"))["content"] == "use the guide\n"
    with pytest.raises(ToolError, match="at least 1"):
        call(box, "read", path="f.txt", limit=0)


def test_read_refuses_binary_files_folders_and_fifos(box: ToolBox, world: Path) -> None:
    work = world / "work"
    (work / "nul.bin").write_bytes(b"text\x00more")
    (work / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    (work / "folder").mkdir()
    os.mkfifo(work / "pipe")
    with pytest.raises(ToolError, match="binary file"):
        call(box, "read", path="nul.bin")
    with pytest.raises(ToolError, match=r"binary file .*not UTF-8"):
        call(box, "read", path="latin.txt")
    with pytest.raises(ToolError, match="is a folder"):
        call(box, "read", path="folder")
    started = time.monotonic()
    with pytest.raises(ToolError, match="FIFO"):
        call(box, "read", path="pipe")
    assert time.monotonic() - started < 5
    with pytest.raises(ToolError, match="does not exist"):
        call(box, "read", path="missing.txt")


def test_read_caps_its_size_with_a_marker_that_says_where_to_read_on(world: Path) -> None:
    places = Places(world / "work")
    (world / "work" / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 1001)))
    result, effect = toolkit.Read(places, max_bytes=100).invoke(path="big.txt")
    assert "[skillc: truncated at 100 bytes" in result["content"] and "offset=" in result["content"]
    assert effect == {"op": "read", "path": "big.txt", "bytes": 100, "truncated": True}
    # the line range reader is capped the same way, and never cuts a character in two
    (world / "work" / "wide.txt").write_text("é" * 200 + "\n")
    result, _ = toolkit.Read(places, max_bytes=51).invoke(path="wide.txt", offset=1, limit=1)
    assert result["content"].startswith("é" * 25 + "\n[skillc: truncated")


# ---------------------------------------------------------------- write and edit


def test_write_creates_folders_atomically_and_reports_what_it_wrote(box: ToolBox, world: Path) -> None:
    result, effects = box.call_with_effects(KIT["write"], {"path": "out/deep/r.md", "content": "héllo\n"})
    data = "héllo\n".encode()
    digest = hashlib.sha256(data).hexdigest()
    assert result == {"path": "out/deep/r.md", "bytes": len(data), "sha256": digest}
    assert effects == ({"op": "write", "path": "out/deep/r.md", "bytes": len(data), "sha256": digest,
                        "created": True},)
    assert (world / "work" / "out" / "deep" / "r.md").read_bytes() == data
    assert isinstance(result, ToolResults) and result.effects == effects and box.last_effects == effects
    os.chmod(world / "work" / "out" / "deep" / "r.md", 0o640)
    call(box, "write", path="out/deep/r.md", content="new")
    assert stat.S_IMODE(os.stat(world / "work" / "out" / "deep" / "r.md").st_mode) == 0o640  # mode kept
    assert box.last_effects is not None and box.last_effects[0]["created"] is False
    assert sorted(os.listdir(world / "work" / "out" / "deep")) == ["r.md"]  # no temporary file left


def test_write_goes_through_a_symlink_inside_the_places(box: ToolBox, world: Path) -> None:
    work = world / "work"
    (work / "target.txt").write_text("old")
    (work / "link.txt").symlink_to(work / "target.txt")
    assert call(box, "write", path="link.txt", content="new")["path"] == "target.txt"
    assert (work / "link.txt").is_symlink() and (work / "target.txt").read_text() == "new"


def test_edit_replaces_exact_text_once_or_everywhere(box: ToolBox, world: Path) -> None:
    f = world / "work" / "notes.md"
    f.write_text("a = 1\nb = 1\nc = 2\n")
    with pytest.raises(ToolError, match="occurs 2 times"):
        call(box, "edit", path="notes.md", old="= 1", new="= 9")
    assert f.read_text() == "a = 1\nb = 1\nc = 2\n"
    result = call(box, "edit", path="notes.md", old="b = 1", new="b = 5")
    assert result == {"replacements": 1, "sha256": hashlib.sha256(b"a = 1\nb = 5\nc = 2\n").hexdigest()}
    assert call(box, "edit", path="notes.md", old="=", new=":", all=True)["replacements"] == 3
    assert f.read_text() == "a : 1\nb : 5\nc : 2\n"
    assert box.last_effects is not None and box.last_effects[0]["op"] == "edit"
    with pytest.raises(ToolError, match="not found"):
        call(box, "edit", path="notes.md", old="zzz", new="y")
    with pytest.raises(ToolError, match="the same"):
        call(box, "edit", path="notes.md", old="a", new="a")
    with pytest.raises(ToolError, match="`old` is empty"):
        call(box, "edit", path="notes.md", old="", new="y")
    with pytest.raises(ToolError, match=r"does not exist .*write creates"):
        call(box, "edit", path="new.md", old="x", new="y")
    (world / "work" / "b.bin").write_bytes(b"\x00\x01x")
    with pytest.raises(ToolError, match="binary"):
        call(box, "edit", path="b.bin", old="x", new="y")


# ---------------------------------------------------------------- bad input changes nothing outside


def test_bad_calls_are_tool_errors_and_change_nothing_outside(box: ToolBox, world: Path) -> None:
    work = world / "work"
    (work / "escape").symlink_to(world / "outside")
    (work / "secret-link").symlink_to(world / "outside" / "secret.txt")
    (work / "dangling").symlink_to(world / "outside" / "created-by-a-tool.txt")
    (work / "adir").mkdir()
    before_outside, before_skill = tree_state(world / "outside"), tree_state(world / "skill")
    before_top = sorted(os.listdir(world))
    bad: list[tuple[str, dict[str, Any], str]] = [
        ("read", {"path": "../outside/secret.txt"}, "outside the places"),
        ("read", {"path": "escape/secret.txt"}, "outside the places"),
        ("read", {"path": "secret-link"}, "outside the places"),
        ("write", {"path": "../outside/secret.txt", "content": "pwned"}, "outside the places"),
        ("write", {"path": "escape/secret.txt", "content": "pwned"}, "outside the places"),
        ("write", {"path": "secret-link", "content": "pwned"}, "outside the places"),
        ("write", {"path": "dangling", "content": "pwned"}, "outside the places"),
        ("write", {"path": "../sibling.txt", "content": "x"}, "outside the places"),
        ("write", {"path": str(world / "skill" / "references" / "guide.md"), "content": "x"}, "only read"),
        ("write", {"path": "adir", "content": "x"}, "is a folder"),
        ("write", {"path": "a\x00b", "content": "x"}, "NUL"),
        ("edit", {"path": "secret-link", "old": "secret", "new": "x"}, "outside the places"),
        ("edit", {"path": "escape/secret.txt", "old": "secret", "new": "x"}, "outside the places"),
        ("glob", {"pattern": "*", "path": "escape"}, "outside the places"),
        ("glob", {"pattern": "../outside/*"}, "outside the places"),
        ("grep", {"pattern": "secret", "path": "escape"}, "outside the places"),
        ("bash", {"command": "pwd", "cwd": "escape"}, "outside the places"),
    ]
    for name, args, message in bad:
        with pytest.raises(ToolError, match=message):
            call(box, name, **args)
    assert tree_state(world / "outside") == before_outside and tree_state(world / "skill") == before_skill
    assert sorted(os.listdir(world)) == before_top
    # globbing and grepping the work folder never follow the link out
    assert "escape/secret.txt" not in call(box, "glob", pattern="**/*")["files"]
    assert call(box, "grep", pattern="secret")["matches"] == []


# ---------------------------------------------------------------- glob and grep


def test_glob_matches_recursively_sorted_and_confined(box: ToolBox, world: Path) -> None:
    work = world / "work"
    for rel in ("b.md", "a.md", "src/x.py", "src/deep/y.py", "src/deep/z.txt", ".git/config.md"):
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(rel)
    assert call(box, "glob", pattern="*.md") == {"files": ["a.md", "b.md"], "count": 2}
    assert call(box, "glob", pattern="**/*.py")["files"] == ["src/deep/y.py", "src/x.py"]
    assert call(box, "glob", pattern="src/**/*.{py,txt}")["files"] == ["src/deep/y.py", "src/deep/z.txt",
                                                                       "src/x.py"]
    assert call(box, "glob", pattern="*.py", path="src") == {"files": ["src/x.py"], "count": 1}
    assert call(box, "glob", pattern="nothing/**/*.py") == {"files": [], "count": 0}
    assert call(box, "glob", pattern="**/*.md")["files"] == ["a.md", "b.md"]  # .git is not entered
    skill = call(box, "glob", pattern="**/*.md", path=str(world / "skill"))
    assert skill["files"] == [str(world / "skill" / "references" / "guide.md")]
    with pytest.raises(ToolError, match=r"`..` may only stand"):
        call(box, "glob", pattern="src/*/../../*")


def test_glob_caps_its_list(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolkit, "MAX_GLOB_FILES", 3)
    for i in range(5):
        (world / "work" / f"f{i}.txt").write_text("x")
    result, effect = toolkit.Glob(Places(world / "work")).invoke(pattern="*.txt")
    assert result == {"files": ["f0.txt", "f1.txt", "f2.txt"], "count": 3} and effect["truncated"] is True


def test_grep_lists_matching_lines_or_files(box: ToolBox, world: Path) -> None:
    work = world / "work"
    (work / "src").mkdir()
    (work / "src" / "a.py").write_text("import os\nTODO: fix\nprint('todo')\n")
    (work / "notes.md").write_text("todo list\r\nnothing\n")
    (work / "blob.bin").write_bytes(b"TODO\x00\x00")
    assert call(box, "grep", pattern="TODO") == {"matches": ["src/a.py:2:TODO: fix"], "count": 1}
    assert call(box, "grep", pattern="todo", ignore_case=True)["matches"] == [
        "notes.md:1:todo list", "src/a.py:2:TODO: fix", "src/a.py:3:print('todo')"]
    assert call(box, "grep", pattern="todo", ignore_case=True, files_only=True)["matches"] == ["notes.md", "src/a.py"]
    assert call(box, "grep", pattern="todo", glob="*.py")["matches"] == ["src/a.py:3:print('todo')"]
    assert call(box, "grep", pattern="^import", path="src/a.py")["matches"] == ["src/a.py:1:import os"]
    _, effects = box.call_with_effects(KIT["grep"], {"pattern": "TODO"})
    assert effects is not None and effects[0]["skipped_binary"] == 1  # the binary file was skipped
    with pytest.raises(ToolError, match="invalid regular expression"):
        call(box, "grep", pattern="(unclosed")


def test_grep_caps_matches(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolkit, "MAX_GREP_MATCHES", 2)
    (world / "work" / "many.txt").write_text("hit\n" * 10)
    result, effect = toolkit.Grep(Places(world / "work")).invoke(pattern="hit")
    assert result["count"] == 2 and effect["truncated"] is True


@pytest.mark.parametrize("engine", ["regex", "child"])
def test_a_catastrophic_pattern_is_stopped_not_a_hang(world: Path, engine: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if engine == "regex":
        pytest.importorskip("regex")
    else:
        monkeypatch.setattr(toolkit, "_REGEX_DISABLED", True)
    (world / "work" / "evil.txt").write_text("a" * 60 + "!\n")
    grep = toolkit.Grep(Places(world / "work"), timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"took longer than 0.5 s"):
        grep.invoke(pattern="(a|aa)+$")
    assert time.monotonic() - started < 15
    assert grep.invoke(pattern="a+!")[0]["matches"] == ["evil.txt:1:" + "a" * 60 + "!"]  # the same engine works


# ---------------------------------------------------------------- bash


def test_bash_is_real_bash_with_the_places_in_its_environment(box: ToolBox, world: Path) -> None:
    (world / "work" / "sub").mkdir()
    result, effects = box.call_with_effects(KIT["bash"], {
        "command": 'echo "$WORKDIR|$SKILL_DIR"; pwd; [[ -n $BASH_VERSION ]] && echo bash'})
    assert result["stdout"] == f"{world / 'work'}|{world / 'skill'}\n{world / 'work'}\nbash\n"
    assert result["exit_code"] == 0 and result["stderr"] == ""
    assert effects is not None and effects[0]["op"] == "bash" and effects[0]["cwd"] == "."
    assert effects[0]["exit_code"] == 0 and effects[0]["duration_ms"] >= 0
    assert call(box, "bash", command="pwd", cwd="sub")["stdout"] == f"{world / 'work' / 'sub'}\n"
    assert box.last_effects is not None and box.last_effects[0]["cwd"] == "sub"
    assert call(box, "bash", argv=["printf", "%s", "a; b"], cwd=str(world / "skill"))["stdout"] == "a; b"
    assert call(box, "bash", command="exit 4")["exit_code"] == 4


def test_bash_timeout_per_call_reports_its_effect(box: ToolBox, world: Path) -> None:
    with pytest.raises(ToolError, match=r"timed out after 0.3 s") as err:
        box.call(KIT["bash"], {"command": "sleep 30", "timeout": 0.3})
    assert err.value.effects is not None and err.value.effects[0]["timed_out"] is True
    assert box.last_effects == err.value.effects
    with pytest.raises(ToolError, match="positive number"):
        call(box, "bash", command="true", timeout=0)


def test_a_machine_declaring_the_old_bash_still_gets_its_results(box: ToolBox) -> None:
    old = Tool("bash", (("command", STR),), (("stdout", STR), ("exit_code", INT)))
    assert box.call(old, {"command": "echo hi"}) == {"stdout": "hi\n", "exit_code": 0}
    assert BashTool()(command="echo hi")["stdout"] == "hi\n"  # the class keeps its old call


def test_without_bash_sh_runs_the_command_and_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from skillc.runtime import tools

    monkeypatch.setattr(tools, "SHELL", "/bin/sh")
    monkeypatch.setattr(tools, "SHELL_NOTE", "[skillc: no bash on this system: the command ran with /bin/sh]\n")
    result = BashTool(cwd=str(tmp_path))(command="echo hi")
    assert result["stdout"] == "hi\n" and "ran with /bin/sh" in result["stderr"]


# ---------------------------------------------------------------- the tool box


def test_for_run_registers_the_kit_and_module_tools_replace_it(world: Path) -> None:
    mod = world / "mytools.py"
    mod.write_text("def read(path):\n    return {'content': 'mine', 'lines': 1}\n"
                   "def add(a, b):\n    return {'sum': a + b}\n")
    box = ToolBox.for_run(None, workdir=world / "work", modules=[str(mod)])
    assert set(KIT) <= set(box.functions) and "add" in box.functions
    assert box.call(KIT["read"], {"path": "x"}) == {"content": "mine", "lines": 1}
    assert box.last_effects is None  # a Python tool reports no effects
    default = ToolBox.default(cwd=str(world / "work"))
    assert set(KIT) <= set(default.functions)
    assert default.call(KIT["write"], {"path": "d.txt", "content": "x"})["path"] == "d.txt"


def test_a_kit_name_declared_with_other_results_is_not_implemented_by_the_kit(world: Path) -> None:
    machine = skillc.check("""machine m {
  tool read(file: str) -> (text: str)
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var text: str
  var out: str
  start r
  tool r {
    call read(file: "x")
    writes text
    -> s
  }
  tool s {
    call bash(command: "true")
    writes out = stdout
    -> done
  }
  terminal done: success { requires text, out }
  fallback
}
""").machine
    assert machine is not None
    assert ToolBox.for_run(machine, workdir=world / "work").missing(machine) == ["read"]


# ---------------------------------------------------------------- capability sets


def caps_box(world: Path, *entries: str, modules: tuple[str, ...] = ()) -> ToolBox:
    caps, problems = parse_allowed(entries)
    assert not problems
    machine = skillc.check("machine m {\n  var x: str\n  start done\n  terminal done: success { requires x }\n"
                           "  fallback\n}\n").machine
    assert machine is not None
    import attrs

    return ToolBox.for_run(attrs.evolve(machine, allowed=caps), workdir=world / "work", skill_dir=world / "skill",
                           modules=modules)


def test_a_tool_outside_the_allowed_list_is_refused_before_it_runs(world: Path) -> None:
    box = caps_box(world, "Read", "Bash(git status:*)")
    with pytest.raises(ToolError, match=r"outside allowed-tools: `write` is not in the machine's allowed tools"):
        call(box, "write", path="x", content="y")
    assert not (world / "work" / "x").exists()
    (world / "work" / "r.txt").write_text("r")
    assert call(box, "read", path="r.txt")["content"] == "r"
    assert call(box, "glob", pattern="*")["files"] == ["r.txt"]  # Read bounds glob and grep too
    box.functions["ask_user"] = lambda question, **_: {"answer": "yes"}
    assert call(box, "ask_user", question="ok?") == {"answer": "yes"}  # asking is always allowed


def test_edit_entries_bound_write_and_paths_must_match(world: Path) -> None:
    box = caps_box(world, "Read(docs/**)", "Edit(docs/**)", "Write(*.md)")
    (world / "work" / "docs").mkdir()
    assert call(box, "write", path="docs/a.txt", content="x")["path"] == "docs/a.txt"
    assert call(box, "write", path="top.md", content="x")["path"] == "top.md"  # `*.md`: a name at any depth
    with pytest.raises(ToolError, match=r"outside allowed-tools: `src/a.txt` matches none of `Edit\(docs/\*\*\)`"):
        call(box, "write", path="src/a.txt", content="x")
    with pytest.raises(ToolError, match="outside allowed-tools"):
        call(box, "read", path="top.md")
    assert call(box, "read", path="docs/a.txt")["content"] == "x"
    assert call(box, "glob", pattern="**/*")["files"] == ["docs/a.txt"]  # only what Read(docs/**) shows
    assert call(box, "grep", pattern="x")["matches"] == ["docs/a.txt:1:x"]
    with pytest.raises(ToolError, match="outside allowed-tools"):
        call(box, "grep", pattern="x", path="top.md")
    skill = caps_box(world, "Read(references/**)")  # a skill's own folder, named as the skill names it
    assert call(skill, "read", path=str(world / "skill" / "references" / "guide.md"))["lines"] == 1


@pytest.mark.parametrize("command, allowed", [
    ("git diff", True),
    ("git diff --stat HEAD~1", True),
    ("  git diff -- 'a;b.txt'", True),
    ('git diff "$(echo x)"', False),
    ("git diff '$(echo x)'", True),
    ("git diff ${HOME}", True),
    ("git diff ${HOME:-x}", False),
    ("git diff; rm -rf /", False),
    ("git diff && rm x", False),
    ("git diff || rm x", False),
    ("git diff | sh", False),
    ("git diff & rm x", False),
    ("git diff > out.txt", False),
    ("git diff < in.txt", False),
    ("git diff `rm x`", False),
    ("git diff $(rm x)", False),
    ("git diff\nrm x", False),
    ("git diff (x)", False),
    ("git diff 'unclosed", False),
    ("git difftool", False),
    ("rm -rf /", False),
    ("make test", True),
    ("make test; echo", False),
    ("make", False),
])
def test_bash_commands_inside_and_outside_the_allowed_list(world: Path, command: str, allowed: bool) -> None:
    caps, _ = parse_allowed(["Bash(git diff:*)", "Bash(make test)"])
    guard = Capabilities(caps, Places(world / "work"))
    if allowed:
        guard.check("bash", {"command": command})
    else:
        with pytest.raises(ToolError, match="outside allowed-tools"):
            guard.check("bash", {"command": command})


def test_an_operator_after_an_allowed_prefix_is_named_and_nothing_runs(world: Path) -> None:
    box = caps_box(world, "Bash(echo:*)")
    assert call(box, "bash", command="echo 'a; b'")["stdout"] == "a; b\n"
    with pytest.raises(ToolError, match=r"adds shell control \(;\) to what `Bash\(echo:\*\)` allows"):
        call(box, "bash", command="echo a; touch pwned")
    assert not (world / "work" / "pwned").exists()
    assert call(box, "bash", argv=["echo", "x;y"])["stdout"] == "x;y\n"  # no shell: nothing to inject
    with pytest.raises(ToolError, match="outside allowed-tools"):
        call(box, "bash", argv=["touch", "pwned"])


def test_a_wildcard_entry_matches_the_whole_command_and_refuses_control_anywhere(world: Path) -> None:
    caps, _ = parse_allowed(["Bash(echo *eas-cli@*)"])
    guard = Capabilities(caps, Places(world / "work"))
    guard.check("bash", {"command": "echo -y eas-cli@latest validate"})
    guard.check("bash", {"argv": ["echo", "eas-cli@1"]})
    for command in ("echo eas-cli validate", "npm eas-cli@1", "echo x; touch pwned; eas-cli@1",
                    "echo eas-cli@1 && touch pwned"):
        with pytest.raises(ToolError, match="outside allowed-tools"):
            guard.check("bash", {"command": command})


def test_shell_control_finds_operators_only_where_bash_acts_on_them() -> None:
    assert shell_control("a 'b;c' \"d|e\" f\\;g") is None
    assert shell_control('a "$(b)"') == "$("
    assert shell_control("a '`b`'") is None
    assert shell_control("a && b") == "&&"
    assert shell_control("a 2>&1") == ">&"
    assert shell_control("a <(b)") == "<("
    assert shell_control("cd x && make", start=9) is None  # before `start`: the allowed prefix's own text
    assert shell_control('a "b') == "an unclosed quote"


def test_a_module_tool_must_be_listed_too(world: Path) -> None:
    mod = world / "m.py"
    mod.write_text("def add(a, b):\n    return {'sum': a + b}\n")
    add = Tool("add", (("a", INT), ("b", INT)), (("sum", INT),))
    with pytest.raises(ToolError, match="outside allowed-tools: `add`"):
        caps_box(world, "Read", modules=(str(mod),)).call(add, {"a": 1, "b": 2})
    assert caps_box(world, "Read", "add", modules=(str(mod),)).call(add, {"a": 1, "b": 2}) == {"sum": 3}


# ---------------------------------------------------------------- effects in the trace


MACHINE = """machine m {
  use tools std
  input name: str
  var out: str
  var digest: str
  var status: int
  start put
  tool put {
    reads name
    call write(path: "out/" ++ name, content: "hi")
    writes out = path, digest = sha256
    -> check
  }
  tool check {
    reads out
    call bash(command: "test -f " ++ quote(out))
    writes status = exit_code
    -> done
  }
  terminal done: success { requires out, digest, status }
  fallback
}
"""


def test_kit_effects_are_recorded_on_the_step_and_read_back(world: Path) -> None:
    from skillc.runtime import Interpreter, RunOptions
    from skillc.runtime.executors.base import BaseExecutor

    checked = skillc.check(MACHINE)
    assert checked.machine is not None, checked.diagnostics
    trace = world / "run.jsonl"
    box = ToolBox.for_run(checked.machine, workdir=world / "work")
    result = Interpreter(checked.machine, BaseExecutor(), box, RunOptions(trace=trace), MACHINE).run({"name": "r.md"})
    assert result.outcome == "success" and result.evidence["status"] == 0
    write, bash = load_run(trace).steps
    digest = hashlib.sha256(b"hi").hexdigest()
    assert write.tool_call == ToolCall("write", {"path": "out/r.md", "content": "hi"}, (
        {"op": "write", "path": "out/r.md", "bytes": 2, "sha256": digest, "created": True},))
    assert bash.tool_call is not None and bash.tool_call.effects is not None
    (effect,) = bash.tool_call.effects
    assert effect["op"] == "bash" and effect["exit_code"] == 0 and effect["cwd"] == "."


def test_tool_calls_without_effects_read_and_write_as_before() -> None:
    old = {"tool": "add", "args": {"a": 1}}
    assert ToolCall.from_json(old) == ToolCall("add", {"a": 1}) and ToolCall("add", {"a": 1}).to_json() == old
    new = {"tool": "write", "args": {}, "effects": [{"op": "write", "path": "a", "bytes": 1, "sha256": "x"}]}
    assert ToolCall.from_json(json.loads(json.dumps(new))).to_json() == new
    from skillc.runtime.record import RecordError

    with pytest.raises(RecordError, match="effects"):
        ToolCall.from_json({"tool": "x", "args": {}, "effects": "no"})


def test_the_child_search_imports_skillc_where_its_source_cannot_be_read(world: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import inspect

    def no_source(obj: object) -> str:
        raise OSError("no source")

    monkeypatch.setattr(toolkit, "_REGEX_DISABLED", True)
    monkeypatch.setattr(inspect, "getsource", no_source)
    (world / "work" / "f.txt").write_text("alpha\nbeta\n")
    assert toolkit.Grep(Places(world / "work"), timeout_s=20).invoke(pattern="^b")[0]["matches"] == ["f.txt:2:beta"]
