"""`skillc dot --diff`: states and edges added, removed and changed between two machines, drawn with a legend.

The diff is skillc.improve.diff's (tests/improve/test_diff.py); here, how it is drawn.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs
from click.testing import CliRunner

from skillc.check.source import check_source
from skillc.cli import main
from skillc.improve.diff import diff_machines
from skillc.ir.machine import Machine
from skillc.render.diff import CHANGE_COLOR, to_dot_diff

OLD = """machine m {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var s: int
  start a
  tool a {
    call bash(command: "make")
    writes s = exit_code
    when s != 0 -> fallback
    -> b
  }
  tool b {
    call bash(command: "test")
    writes s = exit_code
    -> done
  }
  terminal done: success
  fallback
}"""
# `b` removed, `c` added, `a`'s guard changed (!= 0 → > 1) and its default retargeted, `a`'s command changed.
NEW = (OLD.replace('call bash(command: "make")', 'call bash(command: "make all")')
       .replace("when s != 0 -> fallback", "when s > 1 -> fallback")
       .replace("    -> b\n", "    -> c\n").replace("tool b {", "tool c {"))


def machine(text: str) -> Machine:
    """A checked machine."""
    result = check_source(text, path="m.skm")
    assert result.machine is not None, result.diagnostics
    return result.machine


def drawn(old: str, new: str) -> str:
    """The picture of the diff of two machine texts."""
    a, b = machine(old), machine(new)
    return to_dot_diff(a, b, diff_machines(a, b))


def test_render_reads_the_diff_it_is_given_and_never_imports_improve() -> None:
    """Render is a lower stage: it draws whatever diff it is handed (here: `b` marked changed although it is not)."""
    a = machine(OLD)
    told = attrs.evolve(diff_machines(a, a), changed_states=("b",))
    assert '"b" [label="b\\ntool: call bash\\n(changed)"' in to_dot_diff(a, a, told)
    source = (Path(__file__).resolve().parents[2] / "skillc" / "render" / "diff.py").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(from|import) skillc\.improve", source, re.M)


def test_the_picture_colours_changes_and_has_a_legend() -> None:
    text = drawn(OLD, NEW)
    assert text.startswith('digraph "m (diff)"') and "cluster_legend" in text
    assert '"c" [label="c\\ntool: call bash\\n(added)"' in text
    assert '"b" [label="b\\ntool: call bash\\n(removed)"' in text and "style=\"dashed\"" in text
    assert '"a" -> "b"' in text and '"a" -> "c"' in text  # the removed edge is drawn beside the new one
    assert "1 states added, 1 removed, 1 changed" in text


def test_only_changes_are_coloured() -> None:
    """An unchanged state is grey whatever its kind: a tool's green, a judge's orange and the fallback's dashed red
    would read as added, changed and removed."""
    lines = {line.split(" [", 1)[0].strip(): line for line in drawn(OLD, NEW).splitlines()
             if " [label=" in line and "->" not in line}
    for name in ('"done"', '"fallback"'):  # unchanged: the terminal and the fallback
        assert f'color="{CHANGE_COLOR["same"]}"' in lines[name] and "dashed" not in lines[name], lines[name]
        assert all(c not in lines[name] for k, c in CHANGE_COLOR.items() if k != "same")
    assert f'color="{CHANGE_COLOR["added"]}"' in lines['"c"'] and f'color="{CHANGE_COLOR["changed"]}"' in lines['"a"']


def test_dot_diff_on_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "old.skm").write_text(OLD, encoding="utf-8")
    (tmp_path / "new.skm").write_text(NEW, encoding="utf-8")
    runner = CliRunner()
    got = runner.invoke(main, ["dot", "--diff", str(tmp_path / "old.skm"), str(tmp_path / "new.skm")])
    assert got.exit_code == 0 and "(added)" in got.output
    assert runner.invoke(main, ["dot", "--diff", str(tmp_path / "old.skm")]).exit_code == 2
    assert runner.invoke(main, ["dot", str(tmp_path / "old.skm"), str(tmp_path / "new.skm")]).exit_code == 2
    mermaid = runner.invoke(main, ["dot", "--diff", str(tmp_path / "old.skm"), str(tmp_path / "new.skm"),
                                   "--format", "mermaid"])
    assert mermaid.exit_code != 0 and "not mermaid" in mermaid.output
    (tmp_path / "bad.skm").write_text("machine m {", encoding="utf-8")
    bad = runner.invoke(main, ["dot", "--diff", str(tmp_path / "old.skm"), str(tmp_path / "bad.skm")])
    assert bad.exit_code == 1 and "SKM0" in bad.output
