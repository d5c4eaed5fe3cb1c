"""Diagnostic codes of `skillc conform` (SKM860–SKM869), listed in `skillc.registry`.

A transcript that breaks a rule of the machine is reported with one of SKM860–SKM864, at the event that broke it
(its line in the transcript file); SKM865 notes a rule that a transcript cannot show. Transcripts that cannot be
read keep the codes of trace import (SKM800–SKM806, `skillc.improve.codes`). The examples are
chat-transcript lines (JSONL): SKM860, SKM861 and SKM864 are judged against `examples/livemath/livemath.skm`,
SKM862 and SKM863 against `tests/conform/fixtures/deploy/deploy.skm`; `tests/conform/test_codes.py` conforms
each example and asserts its code.
"""

from __future__ import annotations

import json
from typing import Final

from skillc.diagnostics.codes import Code, E, N


def _chat(*commands: str, outcome: str = "success", evidence: dict[str, str] | None = None) -> str:
    """A chat-transcript line whose assistant runs these bash commands, each with a successful result."""
    messages: list[dict[str, object]] = []
    for i, command in enumerate(commands):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": json.dumps(
                {"command": command})}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": '{"stdout": "", "exit_code": 0}'})
    line: dict[str, object] = {"messages": messages, "outcome": outcome}
    if evidence is not None:
        line["evidence"] = evidence
    return json.dumps(line)


_EVIDENCE: Final = {"choice": "B", "readback": "B"}
_LIVEMATH: Final = _chat("printf %s B > answer.txt", "cat answer.txt", evidence=_EVIDENCE)
_DEPLOY: Final = _chat("make build", "make test", "rsync -a --checksum dist/ web:/srv/site/",
                       "curl -fsS https://example.org/health", evidence={"health": "ok"})

REQUIRED_OPERATION_SKIPPED: Final = Code(
    "SKM860", "required-operation-skipped", E, "a successful run never performed an operation a `required` rule "
    "needs",
    "`rule required OP` means every run that ends in success performs OP. The transcript ended `success` and no "
    "event of it performed OP: no event was aligned to OP's states (or, for a tool, called it). Only successful "
    "runs are judged; the violation is reported at the transcript's last event. In the example (livemath) the "
    "run writes answer.txt and finishes without reading it back (`rule required read_back`).",
    _chat("printf %s B > answer.txt", evidence=_EVIDENCE), _LIVEMATH,
    "the run must perform the operation before it may end in success", runnable=False, lang="json")
OPERATION_OUT_OF_ORDER: Final = Code(
    "SKM861", "operation-out-of-order", E, "an operation ran before the operation an `order` rule puts first",
    "`rule order A before B` means no run performs B unless it has performed A. The event reported performed B "
    "and no earlier event performed A. Each rule is reported once per transcript, at the first such event; a "
    "rule whose first operation the transcript cannot show (a model state in a native transcript) is not judged "
    "(SKM865). In the example (deploy) the run publishes before it runs the tests.",
    _chat("make build", "rsync -a --checksum dist/ web:/srv/site/", "make test",
          "curl -fsS https://example.org/health", evidence={"health": "ok"}), _DEPLOY,
    "perform the first operation before the second", runnable=False, lang="json")
FORBIDDEN_OPERATION_PERFORMED: Final = Code(
    "SKM862", "forbidden-operation-performed", E, "the run performed an operation a `forbid` rule prohibits",
    "`rule forbid OP` means no run performs OP: the event reported was aligned to a state that performs OP (or "
    "called the forbidden tool). Whatever the outcome, the first such event is reported and the others are "
    "counted in a note. In the example (deploy) the run deletes the site on the server after publishing it.",
    _chat("make build", "make test", "rsync -a --checksum dist/ web:/srv/site/",
          "curl -fsS https://example.org/health", "ssh web rm -rf /srv/site", evidence={"health": "ok"}),
    _DEPLOY, "the operation must never run; look for what made the agent take it", runnable=False, lang="json")
RUN_ENDED_AGAINST_RULE: Final = Code(
    "SKM863", "run-ended-against-rule", E, "a run that performed an operation ended in another outcome than its "
    "`ends` rule requires",
    "`rule ends OP in OUTCOME` means every run that performs OP ends with OUTCOME (a stop clause: \"if the build "
    "fails, stop with failure\"). The transcript performed OP at the event reported and ended with another "
    "outcome; an unfinished transcript is not judged. In the example (deploy) the build fails, the run shows the "
    "build log and then goes on to publish and ends `success`.",
    _chat("make build", "tail -n 50 build.log", "make test", "rsync -a --checksum dist/ web:/srv/site/",
          "curl -fsS https://example.org/health", evidence={"health": "ok"}),
    _chat("make build", "tail -n 50 build.log", outcome="failed", evidence={"build_log": "error"}),
    "after the operation the run must stop with the outcome the rule names", runnable=False, lang="json")
SUCCESS_WITHOUT_EVIDENCE: Final = Code(
    "SKM864", "success-without-evidence", E, "a run ended in success without the evidence a success terminal "
    "requires",
    "A success terminal's `requires` lists the evidence a successful run hands over (a skillc trace's footer, a "
    "native run's `finish`, a chat transcript's `evidence` object). The transcript ended `success` and, for "
    "every success terminal of the machine, some required variable has no value; the one missing the fewest is "
    "named. Claude Code logs have no evidence to hand over and are not judged on it. In the example (livemath) "
    "the run reports its choice but not what it read back.",
    _chat("printf %s B > answer.txt", "cat answer.txt", evidence={"choice": "B"}), _LIVEMATH,
    "report every variable the success terminal requires when the run finishes", runnable=False, lang="json")
RULE_NOT_JUDGED: Final = Code(
    "SKM865", "rule-not-judged", N, "the transcript cannot show whether a rule held",
    "A native, prompt-only, chat or Claude Code transcript shows tool calls, not the model and judge states of "
    "the machine (their work happens inside the model's turns): a rule whose operation is only performed by "
    "model or judge states cannot be judged on such a transcript, and is neither a violation nor a pass. A skillc "
    "machine-mode trace names every state, so every rule is judged on it. In the example (livemath) `rule order "
    "pick before write` needs the `pick` model state.",
    _LIVEMATH, "", None, runnable=False, lang="json")

ALL: Final[tuple[Code, ...]] = (REQUIRED_OPERATION_SKIPPED, OPERATION_OUT_OF_ORDER, FORBIDDEN_OPERATION_PERFORMED,
                                RUN_ENDED_AGAINST_RULE, SUCCESS_WITHOUT_EVIDENCE, RULE_NOT_JUDGED)
