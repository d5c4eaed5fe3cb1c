"""Diagnostic codes of the distiller (SKM4xx), listed in `skillc.registry`.

The examples are JSONL traces, not machines, so the registry test does not run
them; the tests under `tests/frontends/distill/` produce each code from real input.
"""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.codes import Code, E, W

_GOOD = ('{"format": "skillc-trace/1", "id": "g1", "success": true, "steps": ['
         '{"observation": "You are in a kitchen.", "action": "take apple from table", '
         '"next_observation": "You take the apple.", "available_actions": ["take apple from table"], '
         '"score": 1, "done": false}]}')


NO_TRACES: Final = Code(
    "SKM400", "no-traces", E, "there are no traces to distil",
    "The inputs hold no trace at all (empty files, or only blank lines), or every trace was excluded "
    "(failed runs, unparsable actions). Nothing can be distilled and nothing is written.",
    "", _GOOD, "pass JSONL files with one successful trace per line", runnable=False, lang="json")
BAD_TRACE: Final = Code(
    "SKM401", "bad-trace", E, "a trace line is not a valid trace",
    "Each line of a trace file is one JSON object in the `skillc-trace/1` format (see docs/distill.md): "
    "an `id`, a `success` flag and a list of `steps`, each with `observation`, `action`, "
    "`next_observation`, `available_actions`, `score` and `done`. A line that is not JSON, or lacks a "
    "field, or gives one the wrong type, is refused with its line and the field.",
    '{"id": "g1", "steps": "take apple"}', _GOOD, "fix the line, or drop it from the file",
    runnable=False, lang="json")
FAILED_TRACE: Final = Code(
    "SKM402", "failed-trace", W, "a trace did not succeed and is left out",
    "Skills are distilled from successful runs only: a trace whose `success` is false, or whose last "
    "step is not `done`, is excluded and reported, and the rest are used.",
    "", _GOOD, "collect successful runs, or filter failed ones out", runnable=False, lang="json")
UNPARSABLE_ACTION: Final = Code(
    "SKM403", "unparsable-action", W, "an action matches no action schema; its trace is left out",
    "Every action is parsed into an action schema with arguments (`take(item, source)`, …), using the "
    "environment's templates and entity names. An action that matches no template, or names an "
    "entity the trace does not list, cannot be lifted, so its whole trace is excluded.",
    "", _GOOD, "add the template to the trace's `templates`, or list the entity in `entities`",
    runnable=False, lang="json")
NO_REUSABLE_SKILL: Final = Code(
    "SKM404", "no-reusable-skill", W, "no operation is reused often enough to become a skill",
    "Every cluster of operations matched fewer training traces than `--min-reuse` asks for, so the "
    "library is empty.",
    "", "", "lower --min-reuse, or distil from more traces", runnable=False, lang="json")
SKILL_FAILED_VERIFICATION: Final = Code(
    "SKM405", "skill-failed-verification", W, "a skill failed on held-out games and is dropped",
    "Each skill is executed for real on the held-out games wherever its preconditions hold. A call that "
    "fails is an execution error; so is a lost game, blamed on the call after which the game left the "
    "walkthrough's path (the first call that played other actions than the operation it replaced). A "
    "skill with any execution error is not kept; the message names the responsible call, the witness "
    "lists the actions it played, and its error rate is in the report.",
    "", "", "compare the witness (what the call played) with the held-out trace",
    runnable=False, lang="json")
GAME_UNAVAILABLE: Final = Code(
    "SKM406", "game-unavailable", W, "a held-out trace's game cannot be opened; it is not used",
    "Verification replays held-out traces in their game. The game file named by the trace is missing or "
    "not a game, and it cannot be regenerated: the trace has no generator settings, TextWorld refuses "
    "them, or the `textworld` package is not installed.",
    "", "", "keep the game files beside the traces (`game.file`), or record settings TextWorld accepts",
    runnable=False, lang="json")
HELDOUT_GAME_LOST: Final = Code(
    "SKM407", "heldout-game-lost", E, "a held-out game was lost and no skill call is to blame",
    "Verification never reports a lost game as clean. When a held-out game is lost but every skill call "
    "in it played exactly the walkthrough's actions (or there was no call), the loss is not attributed to "
    "a skill: the held-out trace does not replay in its game. It counts as an execution error of the "
    "evaluation, and the run fails.",
    "", "", "check that the held-out trace replays in its game (same game file or generator settings)",
    runnable=False, lang="json")

ALL: Final[tuple[Code, ...]] = (
    NO_TRACES,
    BAD_TRACE,
    FAILED_TRACE,
    UNPARSABLE_ACTION,
    NO_REUSABLE_SKILL,
    SKILL_FAILED_VERIFICATION,
    GAME_UNAVAILABLE,
    HELDOUT_GAME_LOST,
)
