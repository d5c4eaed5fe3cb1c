"""Write the scripted model answers of the real-skill suites (bench/suites/real/*/scripts/LABEL.TASK.json).

A bench of a real skill without a model needs someone to answer each model and judge state. This script
answers for the machine a build made (`OUT/builds/LABEL.skm`, from `skillc bench … --build LABEL=… --dry-run`):
every variable a model or judge state writes gets the value `answers.json` beside the suite gives for it
(a list: one value per visit, the last repeating), else a plain default by type (text "(see above)", 0,
true, the first label of an enum, empty lists). The answers are written before any cell runs and are the same
for every task, so both builds of a skill hear the same answers wherever they name a variable alike; where
they name it differently, each build's name is in `answers.json`. Native cells read `scripts/native.TASK.json`,
written by hand (the actions a competent agent would take).

    python bench/suites/real/make_scripts.py SUITE_FOLDER OUT
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from skillc.check.source import check_source
from skillc.ir import types as T


def default(t: T.Type) -> object:
    """A plain value of type `t`."""
    if isinstance(t, T.OptionalT):
        return default(t.inner)
    if isinstance(t, T.StrT):
        return "(see above)"
    if isinstance(t, (T.IntT, T.FloatT)):
        return 0
    if isinstance(t, T.BoolT):
        return True
    if isinstance(t, T.EnumT):
        return t.labels[0]
    if isinstance(t, T.ListT):
        return []
    if isinstance(t, T.MapT):
        return {}
    if isinstance(t, T.RecordT):
        return {name: default(ft) for name, ft in t.fields}
    return None


def script(machine_file: Path, answers: dict[str, object]) -> dict[str, object]:
    """The scripted executor's file for one machine: each model and judge state's answers, in visit order."""
    machine = check_source(machine_file).machine
    assert machine is not None, f"{machine_file} does not check"
    outputs: dict[str, list[object]] = {}
    for name, state in machine.states.items():
        if state.kind not in ("model", "judge") or not state.writes:
            continue
        visits = max((len(v) for w in state.writes if isinstance(v := answers.get(w), list) and w + "[]" not in
                      answers), default=1)
        outputs[name] = [{w: _nth(answers, w, i, machine.variables[w].type) for w in state.writes}
                         for i in range(visits)]
    return {"outputs": outputs}


def _nth(answers: dict[str, object], name: str, i: int, t: T.Type) -> object:
    """The answer for variable `name` on visit `i`: a list in answers.json is one value per visit (a list-typed
    variable's value is given as `name[]`), else the same value every time, else the default."""
    if name + "[]" in answers:
        return answers[name + "[]"]
    if name not in answers:
        return default(t)
    value = answers[name]
    if isinstance(value, list) and value:
        return value[min(i, len(value) - 1)]
    return value


def main(folder: Path, out: Path) -> None:
    """Write scripts/LABEL.TASK.json for every build in OUT/builds and every task in answers.json (its `*` entry
    holds the answers of every task, a task's own entry overrides them)."""
    answers = json.loads((folder / "answers.json").read_text(encoding="utf-8"))
    shared = answers.get("*", {})
    (folder / "scripts").mkdir(exist_ok=True)
    for built in sorted((out / "builds").glob("*.skm")):
        for task in (t for t in answers if t != "*"):
            text = json.dumps(script(built, {**shared, **answers[task]}), indent=1, ensure_ascii=False) + "\n"
            target = folder / "scripts" / f"{built.stem}.{task}.json"
            target.write_text(text, encoding="utf-8")
            print(target)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
