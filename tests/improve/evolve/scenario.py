"""The scripted scenario of tests/improve/evolve: a misleading first diagnosis that traps greedy refinement."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from skillc.improve.evolve.loop import Evolution, Roles, evolve

__all__ = ["Evolution", "gate", "load", "run", "scenario"]
from skillc.improve.evolve.options import EvolveOptions
from skillc.improve.evolve.roles import Script, ScriptedReflector, ScriptedRunner, ScriptedVerifier, load_script
from skillc.improve.evolve.state import Node

_JSON_CASE = ("import json\n"
              "def check(workdir, outputs, trace):\n"
              "    try:\n"
              "        return isinstance(json.loads((workdir / 'answer.txt').read_text()), dict)\n"
              "    except (OSError, ValueError):\n"
              "        return False\n")
_VALUE_CASE = ("def check(workdir, outputs, trace):\n"
               "    path = workdir / 'answer.txt'\n"
               "    return path.is_file() and '42' in path.read_text()\n")


def _child(name: str, rank: int, machine: str | None = None) -> dict[str, Any]:
    return {"name": name, "rank": rank, "machine": machine or f"machine {name}"}


def scenario() -> dict[str, Any]:
    """The task wants answer.txt as a JSON object holding 42 and a verification step (checked.txt).

    The root writes a bare 42. Reflection's first, best-ranked idea is wrong (the value), and it keeps
    insisting on it below that branch (A → A1 → A2 …); the second child C does not pass the gate; the
    third, B (JSON output), is right but not enough: reflection on B finds the missing verification step.
    """
    chain = ["A", "A1", "A2", "A3", "A4"]
    reflect: dict[str, Any] = {
        "root": [
            {"operations": [
                {"op": "add", "id": "h1", "description": "the computed value is wrong",
                 "prediction": "answer.txt does not hold 42"},
                {"op": "add", "id": "h2", "description": "the output format is wrong",
                 "prediction": "answer.txt is not a JSON object"}]},
            {"children": [_child("A", 1), _child("C", 2, "BROKEN"), _child("B", 3)]}],
        "B": [
            {"operations": [
                {"op": "refute", "id": "h1"},
                {"op": "add", "id": "h3", "description": "the verification step is missing",
                 "prediction": "checked.txt does not exist"}]},
            {"children": [_child("B1", 1)]}],
    }
    for parent, child in itertools.pairwise(chain):
        reflect[parent] = [{"children": [_child(child, 1)]}]
    verify = {
        "h1": [[{"id": "value42", "kind": "python", "source": _VALUE_CASE, "strength": "semantic"}]],
        "h2": [[{"id": "exists", "kind": "shell", "source": "test -f answer.txt", "strength": "hard"},
                {"id": "json", "kind": "python", "source": "def check(workdir, outputs, trace)\n", "strength": "hard"}],
               [{"id": "json", "kind": "python", "source": _JSON_CASE, "strength": "hard"}]],
        "h3": [[{"id": "checked", "kind": "shell", "source": "test -f checked.txt", "strength": "hard"}]],
    }
    answer = json.dumps({"answer": 42})
    execute: dict[str, Any] = {
        "root": {"reward": 0, "files": {"answer.txt": "42\n"}},
        "B": {"reward": 0, "files": {"answer.txt": answer}},
        "B1": {"reward": 1, "files": {"answer.txt": answer, "checked.txt": "ok\n"}},
        "C": {"reward": 0},
    }
    for name in chain:
        execute[name] = {"reward": 0, "files": {"result.txt": "43\n"}}
    return {"reflect": reflect, "verify": verify, "execute": execute}


def load(folder: Path) -> Script:
    """The scenario written to `folder/roles.json` and loaded as a role script."""
    path = folder / "roles.json"
    path.write_text(json.dumps(scenario()), encoding="utf-8")
    loaded = load_script(path)
    assert isinstance(loaded, Script), loaded
    return loaded


def gate(node: Node) -> str | None:
    """The scenario's gate: the candidate named BROKEN does not check."""
    return "error[SKM101]: the candidate does not check" if node.machine == "BROKEN" else None


def run(script: Script, out: Path, **options: Any) -> Evolution:
    """Evolve the scenario's root with its scripted roles (`gate` and EvolveOptions fields as keywords)."""
    verifier = ScriptedVerifier(script) if options.get("self_verifier", True) else None
    roles = Roles(ScriptedRunner(script, out), ScriptedReflector(script), verifier)
    chosen = options.pop("gate", gate)
    return evolve("machine root", roles, gate=chosen, options=EvolveOptions(**options))
