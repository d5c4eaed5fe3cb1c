"""TextWorld: generate cooking games offline, record their walkthroughs as traces, and play them.

`textworld` is imported lazily: the rest of the distiller works without it.
Games are generated in-process with TextWorld's `tw-cooking` challenge (what
`tw-make tw-cooking` runs) and are deterministic for given settings and seed,
so a trace records its game's settings and the game can be regenerated.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import attrs

from skillc.diagnostics.files import FileProblem, confined
from skillc.frontends.distill.trace import FORMAT, Episode, Transition

if TYPE_CHECKING:
    from skillc.runtime.jsonvalue import Object

GENERATOR = "tw-cooking"


class Unavailable(Exception):
    """TextWorld is not installed, or a game cannot be made or opened."""


@attrs.frozen
class GameSpec:
    """The settings of one `tw-cooking` game (the flags of `tw-make tw-cooking`)."""

    seed: int
    recipe: int = 2
    take: int = 1
    go: int = 1
    open: bool = False
    cook: bool = False
    cut: bool = False

    @property
    def id(self) -> str:
        """A readable, unique game id: `tw-cooking-r2t1g6-oc-s7`."""
        flags = "".join(f for f, on in (("o", self.open), ("k", self.cook), ("c", self.cut)) if on)
        return f"{GENERATOR}-r{self.recipe}t{self.take}g{self.go}{'-' + flags if flags else ''}-s{self.seed}"

    def to_json(self) -> Object:
        return {"generator": GENERATOR, **attrs.asdict(self)}

    @classmethod
    def from_json(cls, obj: Object) -> GameSpec:
        fields = {f.name for f in attrs.fields(cls)}
        return cls(**{k: v for k, v in obj.items() if k in fields})

    @property
    def flags(self) -> list[str]:
        """The equivalent `tw-make` command line."""
        out = ["tw-make", GENERATOR, "--recipe", str(self.recipe), "--take", str(self.take), "--go", str(self.go)]
        out += [f"--{f}" for f in ("open", "cook", "cut") if getattr(self, f)]
        return out + ["--seed", str(self.seed)]


def specs(count: int, seed: int = 0, *, recipes: tuple[int, int] = (1, 4),
          maps: Sequence[int] = (1, 6, 9, 12)) -> list[GameSpec]:
    """`count` varied cooking-game settings, deterministic in `seed`: recipes of `recipes[0]` to `recipes[1]`
    ingredients, maps of one of `maps` rooms (`tw-make --go`: 1, 6, 9 or 12)."""

    rng = random.Random(seed)
    out = []
    for i in range(count):
        recipe = rng.randint(*recipes)
        out.append(GameSpec(seed=seed * 100_003 + i, recipe=recipe, take=rng.randint(0, recipe),
                            go=rng.choice(tuple(maps)), open=rng.random() < 0.6,
                            cook=rng.random() < 0.75, cut=rng.random() < 0.75))
    return out


def import_textworld() -> tuple[Any, Any]:
    """TextWorld and its cooking challenge, or Unavailable when the package is not installed."""
    try:  # optional extra, loaded only when TextWorld is asked for
        import textworld
        from textworld.challenges.tw_cooking import cooking
    except ImportError as exc:  # pragma: no cover - exercised only without the package
        raise Unavailable("TextWorld is not installed (pip install textworld)") from exc
    return textworld, cooking


def make_game(spec: GameSpec, folder: str | Path) -> Path:
    """Generate and compile the game of `spec` into `folder` (reused when already there)."""
    textworld, cooking = import_textworld()
    from textworld.generator import compile_game  # optional extra (see import_textworld)

    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise Unavailable(f"cannot keep games in {folder}: {exc.strerror or exc}") from exc
    path = folder / f"{spec.id}.z8"
    if path.exists() and path.with_suffix(".json").exists():
        return path
    settings = {"recipe": spec.recipe, "take": spec.take, "go": spec.go, "open": spec.open, "cook": spec.cook,
                "cut": spec.cut, "drop": False, "recipe_seed": 0, "split": None}
    # Compile under a temporary name, then rename: a crash never leaves a half-written game behind.
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        try:
            options = textworld.GameOptions()
            options.seeds = spec.seed
            options.path = str(Path(tmp) / path.name)
            options.force_recompile = True
            with _quiet():
                game = cooking.make(settings, options)
                built = Path(compile_game(game, options))
        except Exception as exc:  # TextWorld refuses impossible settings in many ways
            raise Unavailable(f"TextWorld could not make {spec.id}: {exc}") from exc
        os.replace(built.with_suffix(".json"), path.with_suffix(".json"))
        os.replace(built, path)
    return path


def _check_game_file(path: Path) -> None:
    """Refuse what is not a compiled TextWorld game before the interpreter sees it (it may exit the process)."""
    if not path.is_file():
        raise Unavailable(f"no game file {path}")
    try:
        with path.open("rb") as f:
            header = f.read(64)
        json.loads(path.with_suffix(".json").read_text())
    except (OSError, ValueError) as exc:
        raise Unavailable(f"{path} is not a game TextWorld can open: its .json beside it is missing or broken "
                          f"({exc})") from exc
    # A Z-machine story file starts with its version (TextWorld compiles version 8) and is at least 64 bytes.
    if path.suffix != ".z8" or len(header) < 64 or header[0] != 8:
        raise Unavailable(f"{path} is not a game TextWorld can open: not a Z-machine version 8 story file")


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence jericho's "unsupported game" warnings: TextWorld games play fine without its extras."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


_INFOS = dict(admissible_commands=True, policy_commands=True, entities=True, feedback=True, objective=True,
              max_score=True, won=True, lost=True, command_templates=True)


class Playing:
    """An environment opened for play, closed by the caller or at the end of a `with` block."""

    _env: Any

    def close(self) -> None:
        self._env.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Game(Playing):
    """A TextWorld game, opened for play: `reset()` then `step(action)` (TextWorld's own return value)."""

    def __init__(self, path: str | Path):
        textworld, _ = import_textworld()
        self.path = Path(path)
        _check_game_file(self.path)
        try:
            with _quiet():
                self._env = textworld.start(str(self.path), request_infos=textworld.EnvInfos(**_INFOS))
        except Exception as exc:  # whatever TextWorld raises, the file is not a game it can play
            raise Unavailable(f"{self.path} is not a game TextWorld can open: {exc}") from exc
        self.state: Any = None  # TextWorld's game state of the last turn
        self.turns = 0

    def reset(self) -> Any:
        """Start the game; returns TextWorld's game state (feedback, admissible commands, walkthrough…)."""
        with _quiet():
            self.state = self._env.reset()
        self.turns = 0
        return self.state

    def step(self, action: str) -> tuple[Any, float, bool]:
        """Play one action: `(game_state, score, done)`, as TextWorld returns it."""
        with _quiet():
            self.state, score, done = self._env.step(action)
        self.turns += 1
        return self.state, score, done

    @property
    def available_actions(self) -> list[str]:
        return list(self.state["admissible_commands"] or [])

    @property
    def won(self) -> bool:
        return bool(self.state and self.state["won"])

    @property
    def lost(self) -> bool:
        """Whether the game is lost (TextWorld's cooking games are lost by spoiling an ingredient, for one)."""
        return bool(self.state and self.state["lost"])

    def entities(self) -> dict[str, str]:
        """Entity name → TextWorld type, read from the game's JSON beside the game file."""
        data = json.loads(self.path.with_suffix(".json").read_text())
        return {info["name"]: info["type"] for _id, info in data["infos"] if info.get("name")}


def record(path: str | Path, spec: GameSpec | None = None, actions: Sequence[str] | None = None,
           trace_id: str | None = None) -> Episode:
    """Play a game (its walkthrough unless `actions` are given) and record every step as a trace."""
    with Game(path) as game:
        state = game.reset()
        plan = list(actions if actions is not None else state["policy_commands"])
        steps = []
        score: float = 0  # TextWorld's scores are integers
        done = False
        for action in plan:
            before = state["feedback"]
            available = tuple(state["admissible_commands"] or ())
            state, score, done = game.step(action)
            steps.append(Transition(_clean(before), action, _clean(state["feedback"]), available, score, bool(done)))
            if done:
                break
        return Episode(id=trace_id or (spec.id if spec else Path(path).stem), steps=tuple(steps),
                     success=bool(state["won"]), env="textworld", objective=state["objective"] or "",
                     entities=game.entities(), templates=tuple(state["command_templates"] or ()),
                     game={**(spec.to_json() if spec else {}), "file": str(path)},
                     score=score, max_score=state["max_score"])


def _clean(text: str | None) -> str:
    """Observation text without the banner and the trailing prompt."""
    lines = [line.rstrip() for line in (text or "").splitlines()]
    lines = [line for line in lines if line.strip() and not set(line.strip()) <= set("$\\|/_ ")]
    text = "\n".join(lines).strip()
    return text[:-1].rstrip() if text.endswith(">") else text


def collect(game_specs: Iterable[GameSpec], folder: str | Path, *, workers: int = 1,
            progress: Callable[[int], None] | None = None, dropped: list[str] | None = None) -> list[Episode]:
    """Generate each game into `folder` and record its walkthrough (in `workers` processes).

    `progress(1)` is told of every game done, in order; a game that cannot be made is left out, and `dropped`
    (when given) is told which and why.
    """
    jobs = [(s, str(folder)) for s in game_specs]
    traces = []
    if workers > 1 and len(jobs) > 1:

        with ProcessPoolExecutor(workers) as pool:
            for trace in pool.map(_collect_one, jobs):
                traces.append(trace)
                if progress is not None:
                    progress(1)
    else:
        for job in jobs:
            traces.append(_collect_one(job))
            if progress is not None:
                progress(1)
    if dropped is not None:
        dropped += [t for t in traces if isinstance(t, str)]
    return [t for t in traces if isinstance(t, Episode)]


def _collect_one(job: tuple[GameSpec, str]) -> Episode | str:
    """The trace of one game, or why it could not be made (some settings are impossible: TextWorld refuses them)."""
    spec, folder = job
    try:
        return record(make_game(spec, folder), spec)
    except Unavailable as exc:
        return f"game {spec.id}: {exc}"


def relative_to(traces: Iterable[Episode], folder: str | Path) -> list[Episode]:
    """Traces whose game files are named relative to `folder` (where the trace file will live)."""
    out = []
    for trace in traces:
        game = dict(trace.game or {})
        if game.get("file"):
            game["file"] = os.path.relpath(os.path.abspath(game["file"]), os.path.abspath(folder))
        out.append(attrs.evolve(trace, game=game))
    return out


def _inside(path: Path, roots: list[str | Path]) -> bool:
    """True when `path` (links resolved) lies in one of `roots`."""

    try:
        confined(str(path), roots, what="game file")
    except FileProblem:
        return False
    return True


def game_path(trace: Episode, folder: str | Path | None = None, relative_to: str | Path | None = None) -> Path:
    """The game file of a trace: the recorded file if it exists, else the game regenerated into `folder`."""
    game = trace.game or {}
    recorded = game.get("file")
    if recorded is not None and not isinstance(recorded, str):
        raise Unavailable(f"trace `{trace.id}`: `game.file` is {type(recorded).__name__}, not a path")
    if recorded:
        candidate = Path(recorded)
        if not candidate.is_absolute() and relative_to is not None:
            candidate = Path(relative_to) / candidate
        # A path read from a trace is used only inside the trace's folder or the games folder (else regenerated).
        roots = [r for r in (relative_to, folder) if r is not None]
        if candidate.exists() and (not roots or _inside(candidate, roots)):
            return candidate
    if game.get("generator") != GENERATOR or "seed" not in game:
        raise Unavailable(f"trace `{trace.id}` names no game file that exists and no generator settings")
    if folder is None:
        folder = Path(tempfile.gettempdir()) / "skillc-textworld"
    try:
        spec = GameSpec.from_json(game)
    except TypeError as exc:
        raise Unavailable(f"trace `{trace.id}`: the generator settings are not valid ({exc})") from exc
    kinds = {f.name: f.type for f in attrs.fields(GameSpec)}
    for name, kind in kinds.items():
        value = getattr(spec, name)
        want = bool if kind in (bool, "bool") else int
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise Unavailable(f"trace `{trace.id}`: `game.{name}` is {value!r}, not {want.__name__}")
    return make_game(spec, folder)


__all__ = ["FORMAT", "Game", "GameSpec", "Unavailable", "collect", "game_path", "make_game", "record", "relative_to",
           "specs"]
