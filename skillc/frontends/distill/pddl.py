"""PDDL planning domains as a second environment: PDDLGym plays them, pyperplan solves them.

`pddlgym` and `pyperplan` are imported lazily: the rest of the distiller works without them. A trace of
a PDDL problem is the pyperplan solution played step by step in PDDLGym, with the applicable ground
actions before each step, the problem's objects and types as entities, and the environment's profile
(its action templates, which schemas are moves or support actions) in the trace header as data. A
trace's `game` names the domain, the split and the problem file, so verification reopens the problem in
PDDLGym and executes the skills there.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from skillc.frontends.distill.textworld import Playing, Unavailable
from skillc.frontends.distill.trace import Episode, Transition

if TYPE_CHECKING:
    from skillc.runtime.jsonvalue import Object

GENERATOR = "pddlgym"
ENV = "pddl"


@attrs.frozen
class Domain:
    """A PDDLGym domain skillc knows: its folder name and its profile hints."""

    name: str
    folder: str  # the domain's name inside pddlgym/pddl
    moves: tuple[str, ...] = ()  # schemas that are navigation
    support: tuple[str, ...] | None = None  # schemas that may be support actions (None: any)
    effects: dict[str, str] = attrs.field(factory=dict, eq=False)


DOMAINS = {
    "blocks": Domain("blocks", "blocks_operator_actions", support=(), effects={
        "pick_up": "{x} is held", "put_down": "{x} is on the table", "stack": "{x} is on {y}",
        "unstack": "{x} is held (taken off {y})"}),
    # The robot's `move` prepares what it makes possible in the other room: a support action, judged from
    # the applicable actions the trace records.
    "gripper": Domain("gripper", "gripper", support=("move",), effects={
        "move": "the robot is in {to}", "pick": "{obj} is held by {gripper}", "drop": "{obj} is in {room}"}),
}


def _quiet_import() -> tuple[Any, Any]:
    """pddlgym and pyperplan, with gym's deprecation banner and pyperplan's logging silenced."""
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:  # optional extras (skillc[pddl]), loaded only when PDDL is asked for
            import pddlgym
            import pyperplan  # noqa: F401  (the planner runs in a child process, see `plan`)
            from pddlgym.core import PDDLEnv
        except ImportError as exc:
            raise Unavailable("PDDL needs `pddlgym` and `pyperplan` (pip install 'skillc[pddl]')") from exc
    logging.getLogger().setLevel(max(logging.getLogger().level, logging.WARNING))
    return pddlgym, PDDLEnv


def domain(name: str) -> Domain:
    """The known domain called `name` (Unavailable otherwise)."""
    if name not in DOMAINS:
        raise Unavailable(f"unknown PDDL domain `{name}` (known: {', '.join(sorted(DOMAINS))})")
    return DOMAINS[name]


def _files(d: Domain, split: str) -> tuple[Path, Path]:
    """The domain file and the problem folder of a split (`train` or `test`)."""
    pddlgym, _env = _quiet_import()
    if split not in ("train", "test"):
        raise Unavailable(f"the split is `train` or `test`, not `{split}`")
    base = Path(pddlgym.__file__).parent / "pddl"
    return base / f"{d.folder}.pddl", base / (d.folder + ("_test" if split == "test" else ""))


def problems(name: str, split: str = "train") -> list[str]:
    """The problem files of a domain's split, smallest number first (`prob2` before `prob10`)."""
    _domain_file, folder = _files(domain(name), split)
    return sorted((p.name for p in folder.glob("*.pddl")), key=_natural)


def _natural(text: str) -> list[int | str]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def profile(name: str) -> Object:
    """The domain's profile as data (the trace header's `profile`): templates from its operators, and hints."""
    d = domain(name)
    env = _open_env(d, "train")
    templates = []
    for op in env.domain.operators.values():
        roles = [_role(p) for p in op.params]
        templates.append(" ".join([op.name, *("{" + r + "}" for r in roles)]))
    out: Object = {"name": f"pddl:{d.name}", "templates": sorted(templates), "moves": list(d.moves),
                           "effects": dict(d.effects)}
    if d.support is not None:
        out["support"] = list(d.support)
    return out


def _role(param: Any) -> str:
    """`?obj:default` → `obj`."""
    return str(param).split(":")[0].lstrip("?") or "arg"


def _open_env(d: Domain, split: str) -> Any:
    _pddlgym, PDDLEnv = _quiet_import()
    domain_file, folder = _files(d, split)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PDDLEnv(str(domain_file), str(folder), operators_as_actions=True, dynamic_action_space=True)


def _text(literal: Any) -> str:
    """A ground action as a command: `pick ball1 rooma left`."""
    return " ".join([literal.predicate.name, *(str(v).split(":")[0] for v in literal.variables)])


class Game(Playing):
    """One PDDL problem opened in PDDLGym: `reset()`, then `step(command)` returns a mapping
    (`observation`, `available_actions`, `done`, `lost`) as distilled skills expect."""

    def __init__(self, name: str, split: str, problem: str):
        self.domain = domain(name)
        self.problem = problem
        self._env = _open_env(self.domain, split)
        files = [os.path.basename(p.problem_fname) for p in self._env.problems]
        if problem not in files:
            raise Unavailable(f"PDDL domain `{name}` ({split}) has no problem `{problem}`")
        self._env.fix_problem_index(files.index(problem))
        self._state: Any = None  # PDDLGym's state of the last turn
        self._done = False
        self._valid: Object = {}

    def reset(self) -> Object:
        """Start the problem; returns the first observation."""
        self._state, _info = self._env.reset()
        self._done = False
        return self._seen("")

    def _seen(self, text: str) -> Object:
        self._valid = {_text(a): a for a in self._env.action_space.all_ground_literals(self._state)}
        observation = (text + "\n" if text else "") + "; ".join(sorted(str(lit) for lit in self._state.literals))
        return {"observation": observation, "available_actions": self.available_actions, "done": self._done,
                "lost": False}

    def step(self, command: str) -> Object:
        """Play one ground action; one that is not applicable changes nothing and says so."""
        action = self._valid.get(" ".join(command.split()))
        if action is None or self._done:
            return self._seen(f"`{command}` is not applicable")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self._state, _reward, done, _truncated, _info = self._env.step(action)
        self._done = bool(done)
        return self._seen(f"did {command}")

    @property
    def available_actions(self) -> list[str]:
        return [] if self._done else sorted(self._valid)

    @property
    def won(self) -> bool:
        return self._done

    @property
    def lost(self) -> bool:
        return False  # a PDDL problem cannot be lost, only left unsolved

    def entities(self) -> dict[str, str]:
        """Object name → PDDL type."""
        return {str(o).split(":")[0]: str(o).split(":")[1] if ":" in str(o) else "object"
                for o in self._state.objects}


def plan(name: str, split: str, problem: str) -> list[str]:
    """pyperplan's plan (greedy best-first search with h_FF) for a problem, as commands.

    pyperplan breaks ties by the iteration order of Python sets, which string hashing randomises: the
    search runs in a child process with a fixed `PYTHONHASHSEED`, so a problem always gets the same plan.
    """
    _quiet_import()
    domain_file, folder = _files(domain(name), split)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    try:
        done = subprocess.run([sys.executable, "-c", _PLANNER, str(domain_file), str(folder / problem)], env=env,
                              capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise Unavailable(f"pyperplan took over 10 minutes on `{problem}` of `{name}`") from None
    if done.returncode != 0 or done.stdout.startswith("NO PLAN"):
        raise Unavailable(f"pyperplan found no plan for `{problem}` of `{name}`"
                          + (f" ({done.stderr.strip().splitlines()[-1]})" if done.stderr.strip() else ""))
    return [line for line in done.stdout.splitlines() if line.strip()]


_PLANNER = """
import contextlib, io, logging, sys
logging.disable(logging.CRITICAL)
from pyperplan import grounding
from pyperplan.heuristics.relaxation import hFFHeuristic
from pyperplan.pddl.parser import Parser
from pyperplan.search import greedy_best_first_search
with contextlib.redirect_stdout(io.StringIO()):
    parser = Parser(sys.argv[1], sys.argv[2])
    task = grounding.ground(parser.parse_problem(parser.parse_domain()))
    found = greedy_best_first_search(task, hFFHeuristic(task))
print("NO PLAN" if found is None else "\\n".join(" ".join(op.name.strip("()").split()) for op in found))
"""


def record(name: str, split: str, problem: str) -> Episode:
    """Solve a problem with pyperplan and play the plan in PDDLGym, recording every step."""
    commands = plan(name, split, problem)
    with Game(name, split, problem) as game:
        seen = game.reset()
        steps = []
        for command in commands:
            before, available = seen["observation"], tuple(seen["available_actions"])
            seen = game.step(command)
            steps.append(Transition(before, command, seen["observation"], available, float(seen["done"]), seen["done"]))
            if seen["done"]:
                break
        return Episode(id=f"pddl-{name}-{split}-{Path(problem).stem}", steps=tuple(steps), success=game.won, env=ENV,
                     objective=f"solve {problem} of {name}", entities=game.entities(), profile=profile(name),
                     game={"generator": GENERATOR, "domain": name, "split": split, "problem": problem})


def collect(name: str, split: str = "train", chosen: Iterable[str] | None = None, *,
            progress: Callable[[int], None] | None = None) -> list[Episode]:
    """A trace per problem of a split (or of the `chosen` problem files); unsolvable ones are left out."""
    out = []
    for problem in (list(chosen) if chosen is not None else problems(name, split)):
        try:
            out.append(record(name, split, problem))
        except Unavailable:
            pass
        if progress is not None:
            progress(1)
    return out


def game_for(trace: Episode) -> Game:
    """Reopen the PDDL problem a trace was recorded on (Unavailable when it cannot be)."""
    game = trace.game or {}
    name, split, problem = (game.get(k) for k in ("domain", "split", "problem"))
    if game.get("generator") != GENERATOR or not (isinstance(name, str) and isinstance(split, str)
                                                  and isinstance(problem, str)):
        raise Unavailable(f"trace `{trace.id}` names no PDDLGym problem (`game.domain`, `split`, `problem`)")
    return Game(name, split, problem)


__all__ = ["DOMAINS", "Domain", "Game", "collect", "game_for", "plan", "problems", "profile", "record"]
