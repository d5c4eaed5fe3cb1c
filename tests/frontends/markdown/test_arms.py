"""Arms of a condition: a stop ends in a terminal with its rule, a jump back is counted."""

from __future__ import annotations

from pathlib import Path

from skillc.frontends.markdown import build
from tests.conftest import codes

DOC = """# Deploy

1. Build the image.
2. Run the smoke tests.
3. If the smoke tests fail, go back to step 1 (at most 2 times).
4. If the registry is down, notify the team, then stop with failure.
5. Push the image.
"""


def built(tmp_path: Path):
    skill = tmp_path / "SKILL.md"
    skill.write_text(DOC, encoding="utf-8")
    result = build(skill, output=tmp_path / "skill.skm")
    assert result.ok and result.machine is not None, codes(result.diagnostics)
    return result.machine


def test_a_jump_back_is_a_counted_edge_to_the_step_it_names(tmp_path: Path) -> None:
    m = built(tmp_path)
    back = [e for s in m.states.values() for e in s.edges if e.target == "build_image" and e.assigns]
    assert len(back) == 1
    (bump,) = back[0].assigns
    assert m.variables[bump.var].is_counter and m.variables[bump.var].max == 2


def test_a_stop_clause_ends_in_a_failed_terminal_proved_by_an_ends_rule(tmp_path: Path) -> None:
    m = built(tmp_path)
    assert m.states["failure"].outcome == "failed"
    (rule,) = [r for r in m.rules if r.kind == "ends"]
    assert rule.outcome == "failed" and "stop with failure" in rule.quote
    (notify,) = rule.ops
    assert [e.target for e in m.states[notify].edges] == ["failure"]
