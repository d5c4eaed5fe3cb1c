"""Units → states and edges: one handler per unit kind, forward references resolved at the end."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from skillc.frontends.markdown import build
from skillc.frontends.markdown.graph import HANDLERS
from skillc.frontends.markdown.units import UnitKind
from tests.conftest import codes

TREE = """# Shipping

1. Look at the order.
2. Choose the carrier:

   ```
   Is the parcel heavy?
   ├─ Yes → continue to step 4
   └─ No → use the post
   ```

3. Print the label.
4. Book the freight carrier.
"""


def test_every_unit_kind_has_a_handler() -> None:
    assert set(HANDLERS) == set(get_args(UnitKind))


def test_a_tree_leaf_that_continues_to_a_later_step_goes_there(tmp_path: Path) -> None:
    # Before the graph phase had its own module, this edge printed as a placeholder and the build failed.
    skill = tmp_path / "SKILL.md"
    skill.write_text(TREE, encoding="utf-8")
    result = build(skill, output=tmp_path / "skill.skm")
    assert result.ok and result.machine is not None, codes(result.diagnostics)
    judge = result.machine.states["parcel_heavy"]
    assert [e.target for e in judge.edges] == ["book_freight_carrier", "use_post"]
