"""Task verifiers: task success decided from effects, never from what the model declared.

Three kinds: a Python callable `module:function` from the suite's folder, called as
`function(workdir, outputs, trace)` and returning a bool or `(bool, reason)`; a
shell command run in the workdir and judged by its exit status; an expected file,
compared exactly or against a regex. A verifier that raises, exits, hangs past its
timeout or returns something else is a failed verification with a reason — it
never stops the bench.

A Python or shell verifier sees the run's outputs but cannot change them: it is given a scratch copy of the
work folder and of the trace (removed afterwards), so what it writes there never reaches the row's kept work
folder, the scores computed from it, or the cases `skillc evolve` runs on it. It runs in a box
(`skillc.sandbox`): its own process with a minimal environment (no secrets), time and memory limits, and, where
the kernel offers Landlock, no write outside the scratch folder and no network. The original folder is
fingerprinted before and after; a verifier that changes it anyway (where no Landlock stops it) fails.

A Python verifier's files are hashed when the suite is loaded (`PythonVerifier.digest`) and again before each
verdict: a verifier rewritten since (by a run, a generated case, anyone) is a failed verification with the
code SKM943, never a pass. A file verifier's pattern is matched with a time limit (`regex`), so a pattern that
backtracks without end fails instead of hanging the bench.

Every verifier may read the task's id, its inputs (JSON) and the run's trace from the environment
(`SKILLC_TASK_ID`, `SKILLC_TASK_INPUTS`, `SKILLC_TRACE`) when the caller passes them (`task_id=`, `inputs=`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

import attrs
import regex

from skillc.bench.effects import read_head, workdir_file
from skillc.diagnostics.code import Code
from skillc.sandbox import codes
from skillc.sandbox.box import call_python, run_confined

#: The default limit, in seconds, of a Python or shell verifier.
DEFAULT_TIMEOUT = 60.0
#: How much of a shell verifier's output is kept for its reason.
MAX_BYTES = 1 << 20
#: The environment variables a shell verifier sees.
ENV_WORKDIR, ENV_TRACE, ENV_OUTPUTS = "SKILLC_BENCH_WORKDIR", "SKILLC_BENCH_TRACE", "SKILLC_BENCH_OUTPUTS"
#: What every verifier may read of the task (when the caller passes it): its id, its inputs as JSON, the trace.
ENV_TASK_ID, ENV_TASK_INPUTS, ENV_RUN_TRACE = "SKILLC_TASK_ID", "SKILLC_TASK_INPUTS", "SKILLC_TRACE"
#: Seconds a file verifier's pattern may take to match.
REGEX_TIMEOUT_S = 5.0
#: The most files of a Python verifier that are hashed (a suite folder full of modules is not read whole).
MAX_VERIFIER_FILES = 1000


@attrs.frozen
class PythonVerifier:
    """`module:function` imported from `folder` (the suite's folder)."""

    target: str
    folder: Path
    timeout: float = DEFAULT_TIMEOUT
    #: The digest of the verifier's files when it was made (the suite loaded): checked again before each verdict.
    digest: str = attrs.field(kw_only=True, eq=False, repr=False)

    @digest.default
    def _digest_now(self) -> str:
        return verifier_digest(self.folder, self.target)


@attrs.frozen
class ShellVerifier:
    """A `/bin/sh -c` command run in the workdir; exit status 0 is success."""

    command: str
    timeout: float = DEFAULT_TIMEOUT


@attrs.frozen
class FileVerifier:
    """A file in the workdir that must exist, equal `equals`, or contain a match of `matches`."""

    path: str
    equals: str | None = None
    matches: str | None = None


Verifier = PythonVerifier | ShellVerifier | FileVerifier


@attrs.frozen
class Verification:
    """Whether the task succeeded, and why not."""

    passed: bool
    reason: str = ""
    #: The diagnostic code of a verification that could not be trusted (SKM943: the verifier was rewritten).
    code: Code | None = None


def verify(verifier: Verifier, *, workdir: Path, outputs: Mapping[str, object], trace: Path,
           task_id: str | None = None, inputs: Mapping[str, object] | None = None) -> Verification:
    """Run one verifier over a finished cell, on a scratch copy of its work folder and trace (a file verifier,
    which only reads, on the folder itself)."""
    if isinstance(verifier, FileVerifier):
        return _verify_file(verifier, workdir)
    with tempfile.TemporaryDirectory(prefix="skillc-bench-verify-") as scratch:
        root = Path(scratch)
        before = fingerprint(workdir)
        try:
            # the cell's layout (work/ beside trace.jsonl) and names are kept, for a verifier that relies on them
            work = snapshot(workdir, root / (workdir.resolve().name or "work"))
            copied_trace = root / (trace.name if trace.name != work.name else f"{trace.name}.trace")
            if trace.is_file():  # a trace that is missing stays missing in the copy
                shutil.copyfile(trace, copied_trace)
        except OSError as exc:
            return Verification(False, f"the work folder could not be copied for the verifier: {_why(exc)}")
        verdict = verify_here(verifier, workdir=work, outputs=outputs, trace=copied_trace, task_id=task_id,
                              inputs=inputs, scratch=root)
    if fingerprint(workdir) != before:
        return Verification(False, "the verifier changed the run's work folder (it must write only in the copy "
                                   "it is given)")
    return verdict


def verify_here(verifier: Verifier, *, workdir: Path, outputs: Mapping[str, object], trace: Path,
                task_id: str | None = None, inputs: Mapping[str, object] | None = None,
                scratch: Path | None = None) -> Verification:
    """Run one verifier on `workdir` and `trace` themselves: for a caller that made them a scratch copy, in
    `scratch` (default: the nearest folder that holds both, unless that is near the root: then the workdir, with
    the trace only readable), the only folder the verifier may write."""
    if isinstance(verifier, FileVerifier):
        return _verify_file(verifier, workdir)
    tampered = _tampered(verifier)
    if tampered is not None:
        return tampered
    root = scratch if scratch is not None else _scratch_of(workdir, trace)
    outputs_path = _write_outputs(outputs, root)
    env = _task_env(workdir, trace, task_id, inputs, outputs_path)
    try:
        if isinstance(verifier, PythonVerifier):
            verdict = _verify_python(verifier, workdir, outputs, trace, env, root)
            # hashed again after the call too: files rewritten while it ran (another cell's run) are no pass either
            return _tampered(verifier) or verdict
        return _verify_shell(verifier, workdir, env, root)
    finally:
        outputs_path.unlink(missing_ok=True)


def _scratch_of(workdir: Path, trace: Path) -> Path:
    """The folder holding both the workdir and the trace, unless that is `/` or just below it (a verifier must not
    be let write half the machine): then the workdir."""
    common = Path(os.path.commonpath([workdir.resolve(), trace.resolve()]))
    return common if len(common.parts) > 2 else workdir.resolve()


def _tampered(verifier: Verifier) -> Verification | None:
    """SKM943 when a Python verifier's files are not what they were when the suite was loaded."""
    if not isinstance(verifier, PythonVerifier) or verifier_digest(verifier.folder, verifier.target) == verifier.digest:
        return None

    return Verification(False, f"{codes.VERIFIER_TAMPERED.code}: the verifier {verifier.target} changed after the "
                               "suite was loaded (its files no longer hash the same); the verdict cannot be "
                               "trusted", code=codes.VERIFIER_TAMPERED)


def _why(exc: OSError) -> str:
    """An OSError in a few words (shutil.Error carries a list of per-file errors instead)."""
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        return str(exc.args[0][0][-1])
    return str(exc.strerror or exc)


# ------------------------------------------------------------------ the scratch copy


def _specials(folder: str, names: list[str]) -> set[str]:
    """The entries of `folder` that are neither files, folders nor links (a named pipe would block a copy)."""
    def special(name: str) -> bool:
        mode = os.lstat(os.path.join(folder, name)).st_mode
        return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))

    return {n for n in names if special(n)}


def snapshot(src: Path, dst: Path) -> Path:
    """Copy the folder `src` to `dst` (links as links, pipes and devices left out); `dst` (OSError on failure)."""
    if src.is_dir():
        shutil.copytree(src, dst, symlinks=True, ignore=_specials)
    else:
        dst.mkdir()
    return dst


def fingerprint(folder: Path) -> frozenset[tuple[str, int, int, int]]:
    """Every entry under `folder` by (relative path, mode, size, mtime in ns): changes when anything is written.

    An entry that cannot be examined counts as missing, so one a verifier removes changes the fingerprint too.
    """
    entries: set[tuple[str, int, int, int]] = set()
    for top, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            path = os.path.join(top, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            entries.add((os.path.relpath(path, folder), st.st_mode, st.st_size, st.st_mtime_ns))
    return frozenset(entries)


# ------------------------------------------------------------------ the hidden verifier's files


def verifier_files(folder: Path, target: str) -> list[Path]:
    """The files a Python verifier is made of: its module (a package's every `.py`) and the `.py` files beside it
    in the suite's folder (the neighbours it may import), in a stable order."""
    base = folder.joinpath(*target.partition(":")[0].split("."))
    found = set(folder.glob("*.py"))
    if base.is_dir():
        found.update(base.rglob("*.py"))
    else:
        found.add(base.with_suffix(".py"))
    return sorted(found)


def verifier_digest(folder: Path, target: str) -> str:
    """A content digest of the verifier's files (a file that cannot be read counts as "missing")."""
    digest = hashlib.sha256()
    for path in verifier_files(folder, target)[:MAX_VERIFIER_FILES]:
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        try:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            digest.update(b"missing")
    return digest.hexdigest()


# ------------------------------------------------------------------ python


def _task_env(workdir: Path, trace: Path, task_id: str | None, inputs: Mapping[str, object] | None,
              outputs_path: Path) -> dict[str, str]:
    """What a confined verifier finds in its environment (and nothing else of skillc's)."""
    env = {ENV_WORKDIR: str(workdir), ENV_TRACE: str(trace), ENV_OUTPUTS: str(outputs_path),
           ENV_RUN_TRACE: str(trace)}
    if task_id is not None:
        env[ENV_TASK_ID] = task_id
    if inputs is not None:
        env[ENV_TASK_INPUTS] = json.dumps(inputs, default=str)
    return env


def _write_outputs(outputs: Mapping[str, object], scratch: Path) -> Path:
    """The outputs as a JSON file in the scratch folder, beside (not in) the work copy; its path."""
    fd, path = tempfile.mkstemp(prefix="skillc-bench-outputs-", suffix=".json", dir=scratch)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(outputs, f, default=str)
    return Path(path)


def _verify_python(verifier: PythonVerifier, workdir: Path, outputs: Mapping[str, object], trace: Path,
                   env: dict[str, str], scratch: Path) -> Verification:
    """Import and call the function in a box (`skillc.sandbox`); any exception, exit or timeout is a failure.

    The module is loaded afresh for each call, in its own process (an edited verifier takes effect on resume).
    """

    module = verifier.target.partition(":")[0]
    base = verifier.folder.joinpath(*module.split("."))
    file = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    # the suite's folder and the one above it (a suite beside its skill reads `../env.py` and the like)
    call = call_python(file, verifier.target.partition(":")[2], scratch=scratch, folder=verifier.folder,
                       readable=[str(trace), str(verifier.folder.resolve().parent)],
                       module=module, args=[str(workdir), dict(outputs), str(trace)], paths=[0, 2], env=env,
                       timeout_s=verifier.timeout)
    if call.box.timed_out:
        return Verification(False, f"the verifier {verifier.target} did not return within {verifier.timeout:g} s")
    problem = call.problem()
    if problem is None:
        return _judge_returned(call.value)
    kind = call.answer.get("kind") if call.answer is not None else None
    if kind == "exit":
        return Verification(False, f"the verifier {verifier.target} called {problem}")
    if kind == "value":
        return Verification(False, f"the verifier {problem}, not a bool or (bool, reason)")
    if kind in ("raised", "import"):
        return Verification(False, f"the verifier {verifier.target} raised {problem}")
    return Verification(False, f"the verifier {verifier.target} failed: {problem}")


def _judge_returned(value: object) -> Verification:
    """A verifier's return value as a verification."""
    if isinstance(value, bool):
        return Verification(value, "" if value else "the verifier returned False")
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bool) and isinstance(value[1], str):
        return Verification(value[0], value[1])
    return Verification(False, f"the verifier returned {value!r:.80}, not a bool or (bool, reason)")


# ------------------------------------------------------------------ shell


def _tail(data: bytes) -> str:
    """The last line or so of a command's output, for the reason."""
    text = data[-MAX_BYTES:].decode("utf-8", errors="replace").strip()
    return text[-200:]


def _verify_shell(verifier: ShellVerifier, workdir: Path, env: dict[str, str], scratch: Path) -> Verification:
    """Run the command in a box (`skillc.sandbox`), in the workdir; the box is killed whole when it exits or
    times out."""

    try:
        box = run_confined(["/bin/sh", "-c", verifier.command], scratch=scratch, cwd=workdir, env=env,
                           readable=[env[ENV_TRACE]],
                           timeout_s=verifier.timeout)
    except OSError as exc:
        return Verification(False, f"the verifier command could not start: {exc.strerror or exc}")
    if box.timed_out:
        return Verification(False, f"the verifier command did not finish within {verifier.timeout:g} s")
    if box.exit == 0:
        return Verification(True)
    said = _tail(box.stdout + box.stderr)
    how = f"exited {box.exit}" if box.exit is not None else box.why().removeprefix("it ")
    return Verification(False, f"the verifier command {how}" + (f": {said}" if said else ""))


# ------------------------------------------------------------------ file


def _verify_file(verifier: FileVerifier, workdir: Path) -> Verification:
    """The expected file exists (inside the workdir) and has the expected content."""
    target = workdir_file(workdir, verifier.path)
    if target is None:
        return Verification(False, f"{verifier.path} does not exist")
    try:
        text = read_head(target)
    except OSError as exc:
        return Verification(False, f"{verifier.path} cannot be read: {exc.strerror or exc}")
    if verifier.equals is not None and text != verifier.equals:
        return Verification(False, f"{verifier.path} holds {text[:60]!r}, not {verifier.equals[:60]!r}")
    if verifier.matches is not None:
        try:
            found = regex.search(verifier.matches, text, timeout=REGEX_TIMEOUT_S)
        except TimeoutError:
            return Verification(False, f"matching /{verifier.matches}/ against {verifier.path} took longer than "
                                       f"{REGEX_TIMEOUT_S:g} s (the pattern backtracks too much)")
        except regex.error as exc:
            return Verification(False, f"/{verifier.matches}/ is not a valid pattern: {exc}")
        if found is None:
            return Verification(False, f"{verifier.path} does not match /{verifier.matches}/ (it holds {text[:60]!r})")
    return Verification(True)
