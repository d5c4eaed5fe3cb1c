"""Diagnostic codes of `skillc evolve` (SKM840–SKM859), listed in `skillc.registry`.

SKM840: options out of range. SKM841: a scripted role file (recorded reflection, self-verifier
or executor replies) that cannot be used. SKM842: a reflection operation that does not fit the
hypothesis store (dropped, the search goes on). SKM843: a generated test case that never passed the
validator within its repair rounds (dropped). SKM844: a role that failed outright (the search stops).
SKM845: a model role's reply that was not the JSON asked for (that round is empty). SKM846: the search was
interrupted (Ctrl-C); what it found so far is kept and written. The examples
are option values or JSON, not machines, so the registry test does not run them; tests/improve/evolve/
produces each code from real input.
"""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.codes import Code, E, W

_SCRIPT: Final = ('{"reflect": {"root": [{"operations": [{"op": "add", "id": "h1", "description": "the answer '
                  'is not written to answer.txt", "prediction": "answer.txt is missing"}], "children": []}]}}')

INVALID_EVOLVE_OPTION: Final = Code(
    "SKM840", "invalid-evolve-option", E, "an evolve option is out of range",
    "The branching factor B, the reflection rounds L, the repair rounds V and the cases per invocation C "
    "are counts of at least 1; the budget K, β, c and the first-play reduction are not negative; the case "
    "timeout is positive; the strategy is `tree` or `greedy`. Nothing runs until every option is valid.",
    "--budget -1", "--budget 5", "give a value in range (the defaults are the issue's: B=5, L=3, K=5, V=3, C=10)",
    runnable=False, lang="text")
INVALID_ROLE_SCRIPT: Final = Code(
    "SKM841", "invalid-role-script", E, "a scripted role file cannot be used",
    "A scripted reflection, self-verifier or executor reads its recorded replies from one JSON file: an object "
    "with `reflect` (node name → list of round replies), `verify` (hypothesis id → list of rounds, each a list "
    "of cases) and `execute` (node name → reward and files). A file that is missing, is not JSON or has a "
    "field of the wrong shape is refused before the search starts, with the field named.",
    '{"reflect": {"root": {"children": []}}}', _SCRIPT, "each node name maps to a list of round replies",
    runnable=False, lang="json")
INVALID_HYPOTHESIS_OPERATION: Final = Code(
    "SKM842", "invalid-hypothesis-operation", W, "a reflection operation does not fit the hypothesis store",
    "Reflection may add a hypothesis under a new id, refine an active one into a new id, or refute an active "
    "one. An operation that reuses an id, or names a hypothesis that does not exist or is no longer active, "
    "is dropped with this warning; the rest of the reply still applies.",
    '{"op": "refute", "id": "h9"}', '{"op": "refute", "id": "h1"}', "name an active hypothesis",
    runnable=False, lang="json")
UNVALIDATED_CASE: Final = Code(
    "SKM843", "unvalidated-case", W, "a generated test case never passed the validator",
    "A test case generated for a hypothesis must have an id no other case has and a source that is not empty, "
    "must compile (Python) or parse (`sh -n`) and must run to a "
    "verdict on the cached output it was written for, within its timeout. The self-verifier is shown the "
    "problem and may repair the case for up to V rounds; a case still broken after that is dropped and never "
    "enters the evidence matrix.",
    'def check(workdir, outputs, trace)\n    return True', "def check(workdir, outputs, trace):\n    return True",
    "give each case its own id and a source that runs to a verdict: Python defines check(workdir, outputs, trace) "
    "returning a bool or (bool, reason); a shell command exits 0 (holds) or 1 (does not)",
    runnable=False, lang="python")

ROLE_FAILED: Final = Code(
    "SKM844", "role-failed", E, "a role could not answer, so the search stopped",
    "The executor, reflection or self-verifier failed outright: a scripted file has no entry for the version "
    "asked about, a model executor could not be reached or ran past its deadline, or a bench cell never ran "
    "(no trace). The search stops there and returns what it found so far: the tree, the evidence and the best "
    "version evaluated before the failure.",
    '{"execute": {"root": {"reward": 0}}}', '{"execute": {"root": {"reward": 0}, "A": {"reward": 1}}}',
    "record every version the search may run, or check the executor spec", runnable=False, lang="json")
UNUSABLE_ROLE_REPLY: Final = Code(
    "SKM845", "unusable-role-reply", W, "a model role's reply was not the JSON object asked for",
    "A model-backed reflection or self-verifier must answer with one JSON object of the requested shape "
    "(operations and children; or cases). A reply that is not JSON, or has a field of the wrong shape, is sent "
    "back once with the problem; a second unusable reply counts as an empty answer for that round, with this "
    "warning naming the problem.",
    '{"children": [{"name": "a", "rank": "first"}]}', '{"children": [{"name": "a", "rank": 1, "machine": "…"}]}',
    "the message names the field; a smaller or grammar-constrained model may need more rounds",
    runnable=False, lang="json")

EVOLVE_INTERRUPTED: Final = Code(
    "SKM846", "evolve-interrupted", W, "the search was interrupted, so it stopped early",
    "An interrupt (Ctrl-C, SIGINT) stops the search where it is: a version whose run or case was cut short "
    "counts as not run, and everything found before it (the versions run, their evidence, the hypotheses) is "
    "kept. `skillc evolve` still writes the evolved machine, tree.json, report.md and tree.dot of those "
    "versions, each whole, and exits 130.",
    "^C during `skillc evolve … -o out`", "skillc evolve … -o out2",
    "the files hold the versions run so far; to go on, evolve the written evolved.skm into another -o folder",
    runnable=False, lang="text")

ALL: Final[tuple[Code, ...]] = (INVALID_EVOLVE_OPTION, INVALID_ROLE_SCRIPT, INVALID_HYPOTHESIS_OPERATION,
                                UNVALIDATED_CASE, ROLE_FAILED, UNUSABLE_ROLE_REPLY, EVOLVE_INTERRUPTED)
