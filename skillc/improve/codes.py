"""Diagnostic codes of refinement (SKM8xx), listed in `skillc.registry`.

SKM800–SKM819: development traces that cannot be imported, and the archive of
accepted traces (trace import, `archive.py`). SKM820–SKM839: alignment, edits
and acceptance. The examples are trace lines (JSONL), not machines, so the
registry test does not run them; `tests/improve/refine/` produces each code
from real input.
"""

from __future__ import annotations

import json
from typing import Final

from skillc.diagnostics.codes import Code, E, N, W

_CHAT: Final = ('{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": '
                '"function", "function": {"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}}]}, '
                '{"role": "tool", "tool_call_id": "c1", "content": "a.txt"}], "outcome": "success"}')
_CLAUDE: Final = ('{"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t1", "name": "Bash", '
                  '"input": {"command": "ls"}}]}}\n'
                  '{"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", '
                  '"content": "a.txt"}]}}\n'
                  '{"type": "result", "subtype": "success", "is_error": false}')

UNREADABLE_DEV_TRACE: Final = Code(
    "SKM800", "unreadable-dev-trace", E, "the development trace file cannot be read",
    "A development trace is a UTF-8 text file: a skillc run trace, a chat-transcript file or a Claude Code "
    "`stream-json` log (see docs/refine.md). The path is missing, is a folder, or the bytes are not UTF-8.",
    "\xff\xfe" + _CHAT, _CHAT, "pass a trace file (JSON Lines, UTF-8)", runnable=False, lang="json")
UNKNOWN_TRACE_FORMAT: Final = Code(
    "SKM801", "unknown-trace-format", E, "the file is in none of the development trace formats",
    "The format is read from the first record: a skillc run trace starts with a `header` record, a chat "
    "transcript line has `messages`, a Claude Code log line has a `type` of system, assistant, user or "
    "result. A file that matches none of them, or a format name that is not skillc, chat or claude-code, "
    "is refused.",
    '{"events": []}', _CHAT, "give the format (skillc, chat or claude-code), or convert the file to one",
    runnable=False, lang="json")
MALFORMED_DEV_TRACE_LINE: Final = Code(
    "SKM802", "malformed-dev-trace-line", E, "a line of the development trace is not JSON",
    "Each line of a chat-transcript file or a Claude Code log is one JSON object. A line that does not "
    "parse is reported at its line and column and left out; the other lines are still read.",
    '{"messages": [', _CHAT, "fix the line, or remove it", runnable=False, lang="json")
INVALID_DEV_TRACE_RECORD: Final = Code(
    "SKM803", "invalid-dev-trace-record", E, "a record of the development trace lacks a field or has one of the "
    "wrong type",
    "A chat transcript needs a list of `messages` (each with a `role`) and an `outcome` (success, partial, "
    "failed or unfinished); an assistant's `tool_calls` need an `id` and a `function` with a `name` and "
    "JSON `arguments`. A Claude Code record's `message.content` must be a list of blocks; a `tool_use` "
    "block needs an `id`, a `name` and an object `input`. The record is left out, with the field named.",
    '{"messages": [{"content": "hi"}], "outcome": "won"}', _CHAT, "fix the record, or remove it",
    runnable=False, lang="json")
UNPAIRED_TOOL_CALL: Final = Code(
    "SKM804", "unpaired-tool-call", W, "a tool call has no result, or a result answers no call",
    "Tool calls are paired with their results by id (`tool_call_id` in a chat transcript, `tool_use_id` "
    "in a Claude Code log). A call without a result is kept as a tool event without a result; a result "
    "whose id names no call is dropped.",
    _CHAT.replace('"tool_call_id": "c1"', '"tool_call_id": "c9"'), _CHAT,
    "check that the log is complete (a cut-off run loses its last results)", runnable=False, lang="json")
NO_TRACE_OUTCOME: Final = Code(
    "SKM805", "no-trace-outcome", W, "the log has no final result; the trace's outcome is unfinished",
    "A Claude Code log ends with a `result` event whose `subtype` (`success`) and `is_error` give the "
    "outcome; a skillc run trace ends with its footer. Without one the run never finished: the trace is "
    "kept with the outcome `unfinished`.",
    _CLAUDE.rsplit("\n", 1)[0], _CLAUDE, "import the whole log, including its last line", runnable=False,
    lang="json")
NO_DEV_TRACES: Final = Code(
    "SKM806", "no-dev-traces", E, "the file holds no development trace",
    "The file's format was recognised but it holds no trace: a Claude Code log with no event of the agent "
    "(only its `system` init record, or only a subagent's traffic). An empty file is SKM801 (no format to "
    "recognise); a file whose every record was refused reports each record instead.",
    '{"type": "system", "subtype": "init", "session_id": "s1"}', _CLAUDE, "pass a file with at least one trace",
    runnable=False, lang="json")
DAMAGED_ARCHIVE: Final = Code(
    "SKM807", "damaged-archive", E, "the archive of accepted traces cannot be read",
    "The archive beside a machine (`MACHINE.archive/`) holds a `manifest.json` naming the machine's content "
    "hash and one entry per accepted trace, each stored once under `objects/` by its content hash. The "
    "manifest is not JSON of that shape, or it names an object that is missing or whose content does not "
    "match its hash. Nothing is written to a damaged archive.",
    '{"version": 1, "machine_hash": 7}', '{"version": 1, "machine_hash": "3f2a…", "entries": {}}',
    "restore the archive from a copy, or move it away to start a new one", runnable=False, lang="json")
ARCHIVE_OUT_OF_STEP: Final = Code(
    "SKM808", "archive-out-of-step", W, "the machine is not the one the archive was accepted against",
    "The manifest names the content hash of the machine every archived trace replayed on; the machine "
    "file now has another hash and no interrupted commit explains it (the file was edited by hand). The "
    "archive is still read, but marked stale: every archived trace must be replayed again before the next "
    "acceptance.",
    "", "", "replay the archive against the machine as it is now (refine does this for a stale archive)",
    runnable=False, lang="json")
ARCHIVE_RECOVERED: Final = Code(
    "SKM809", "archive-recovered", N, "an interrupted commit of machine and archive was completed",
    "A commit writes the new objects, then the new manifest (naming the new machine), then the machine. "
    "A crash after the manifest and before the machine leaves the manifest ahead: on opening, the machine "
    "the manifest names is restored from the archive's objects, so the pair is in step again.",
    "", "", None, runnable=False, lang="json")
REFINE_INTERRUPTED: Final = Code(
    "SKM810", "refine-interrupted", W, "the refinement was interrupted, so some traces were not taken",
    "An interrupt (Ctrl-C, SIGINT) stops `skillc refine` between traces: a commit of the machine and the archive "
    "that has begun is finished first (the interrupt waits for it), so both hold exactly the traces accepted "
    "before the interrupt; the trace being refined and the ones after it are not taken. The command prints "
    "what it did and exits 130. Running it again with the same traces takes only the ones not in the archive "
    "(the others are `known`).",
    "", "", "run the same command again to take the remaining traces", runnable=False, lang="json")

# SKM820–SKM839 (alignment, edits and acceptance; refine-core). The examples are chat-transcript lines for the
# livemath machine of examples/refine/ (`_calls` builds one from the bash commands a run made).


def _calls(*commands: str, outcome: str = "success", tool: str = "bash", arg: str = "command") -> str:
    """A chat-transcript line whose assistant runs these commands, each with an empty successful result."""
    messages: list[dict[str, object]] = []
    for i, command in enumerate(commands):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": tool, "arguments": json.dumps(
                {arg: command})}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": '{"stdout": "", "exit_code": 0}'})
    return json.dumps({"messages": messages, "outcome": outcome})


_FULL: Final = _calls("printf %s B > answer.txt", "cat answer.txt")
_SKIP: Final = _calls("printf %s B > answer.txt")
ALIGNMENT_BYPASSES_RULE: Final = Code(
    "SKM820", "alignment-bypasses-rule", E, "aligning the trace would add an edge that bypasses a state a rule needs",
    "Consecutive aligned states that the machine does not connect (directly or through model and judge states, "
    "which a native run does not show) imply a new edge. The `required` and `order` rules are re-checked as "
    "graph facts with those edges added; when one that held breaks (a success terminal reachable without a "
    "required operation, a later operation reachable without the earlier one), the alignment is rejected: the "
    "trace realigns once over reachable states, and is dropped if that fails too. The example's machine has "
    "`rule order test before ship`; the first run ships straight after the build.",
    _calls("make", "deploy now"), _calls("make", "pytest", "deploy now"),
    "the trace skips a state a rule needs; check the trace, or the rule", runnable=False, lang="json")
CANDIDATE_FAILS_CHECK: Final = Code(
    "SKM821", "candidate-fails-check", W, "the machine edited for a trace does not pass `skillc check`",
    "Every candidate edit is printed as `.skm` and checked like any machine. A candidate with an error (an "
    "unbounded loop, a type error, a rule that no longer holds, ...) is not accepted; the first error is the "
    "witness. The trace realigns once; a second failure drops it. In the example a run calls only a tool the "
    "machine does not have and succeeds: the candidate starts at that new state and goes to `verified`, whose "
    "evidence `choice` is then never written (SKM213).",
    _calls("done", tool="notify", arg="text"), _FULL,
    "refine with more traces, or fix the machine by hand where the witness points", runnable=False, lang="json")
CANDIDATE_BREAKS_REPLAY: Final = Code(
    "SKM822", "candidate-breaks-replay", W, "the machine edited for a trace does not replay an accepted trace",
    "A candidate is accepted only if it replays the current trace and every accepted trace of the archive "
    "(aligned states in order, no fallback, the same terminal category). The first trace that does not "
    "replay is the witness, with the event where the replay diverged. The trace realigns once; a second "
    "failure drops it, so fixing today's trace cannot silently break yesterday's. In the example the archive "
    "holds a run that read the file back; a run that skips the read-back cannot be told apart from it at the "
    "write, so every candidate for it breaks the accepted run.",
    _SKIP, _FULL, "the new trace contradicts an accepted one at the event shown; inspect both",
    runnable=False, lang="json")
GUARD_NOT_SEPARABLE: Final = Code(
    "SKM823", "guard-not-separable", N, "no guard over the known values separates two successors; a judge decides",
    "Where the traces leave one state for two different successors and no comparison of the values known "
    "there (variable against variable, length, literal; never inputs or counters) holds for one and not the "
    "other, the edit inserts a judge whose labels name the successors. A native trace shows no event for the "
    "judge, so its replay takes the judge's default: such a candidate replays only the traces going that way.",
    _SKIP, _FULL, None, runnable=False, lang="json")

UNWRITABLE_TRACE_NAME: Final = Code(
    "SKM824", "unwritable-trace-name", E, "the trace names a tool, argument or value that `.skm` cannot write",
    "An edit declares a trace's new tools with their arguments and results, calls tools with the arguments the "
    "trace passed, and declares the values a model step writes, all under the names the trace gives them. A "
    "name that is not an identifier (letters, digits and `_`, not starting with a digit) or that is a keyword "
    "cannot be written in `.skm`, so the trace is dropped with the name shown; the machine and the archive stay "
    "as they were. In the example a log calls a tool named `list+files`.",
    _calls("ls", tool="list+files"), _FULL, "rename it in the log (letters, digits and `_`), or leave the trace out",
    runnable=False, lang="json")

ALL: Final[tuple[Code, ...]] = (UNREADABLE_DEV_TRACE, UNKNOWN_TRACE_FORMAT, MALFORMED_DEV_TRACE_LINE,
                                INVALID_DEV_TRACE_RECORD, UNPAIRED_TOOL_CALL, NO_TRACE_OUTCOME, NO_DEV_TRACES,
                                DAMAGED_ARCHIVE, ARCHIVE_OUT_OF_STEP, ARCHIVE_RECOVERED, REFINE_INTERRUPTED,
                                ALIGNMENT_BYPASSES_RULE, CANDIDATE_FAILS_CHECK, CANDIDATE_BREAKS_REPLAY,
                                GUARD_NOT_SEPARABLE, UNWRITABLE_TRACE_NAME)
