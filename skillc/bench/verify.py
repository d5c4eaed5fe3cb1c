"""Task verifiers: task success decided from effects, never from what the model declared.

Three kinds: a Python callable `module:function` from the suite's folder, called as
`function(workdir, outputs, trace)` and returning a bool or `(bool, reason)`; a
shell command run in the workdir and judged by its exit status; an expected file,
compared exactly or against a regex. A verifier that raises, exits, hangs past its
timeout or returns something else is a failed verification with a reason — it
never stops the bench.

A Python or shell verifier sees the run's outputs but cannot change them: it is given a scratch copy of the
work folder and of the trace (removed afterwards), so what it writes there never reaches the row's kept work
folder, the scores computed from it, or the cases `skillc evolve` runs on it. The original folder is
fingerprinted before and after; a verifier that changes it anyway (through an absolute path) fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import attrs

from skillc.bench.effects import read_head, workdir_file

#: The default limit, in seconds, of a Python or shell verifier.
DEFAULT_TIMEOUT = 60.0
#: How much of a shell verifier's output is kept for its reason.
MAX_BYTES = 1 << 20
#: The environment variables a shell verifier sees.
ENV_WORKDIR, ENV_TRACE, ENV_OUTPUTS = "SKILLC_BENCH_WORKDIR", "SKILLC_BENCH_TRACE", "SKILLC_BENCH_OUTPUTS"


@attrs.frozen
class PythonVerifier:
    """`module:function` imported from `folder` (the suite's folder)."""

    target: str
    folder: Path
    timeout: float = DEFAULT_TIMEOUT


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


def verify(verifier: Verifier, *, workdir: Path, outputs: Mapping[str, object], trace: Path) -> Verification:
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
        verdict = verify_here(verifier, workdir=work, outputs=outputs, trace=copied_trace)
    if fingerprint(workdir) != before:
        return Verification(False, "the verifier changed the run's work folder (it must write only in the copy "
                                   "it is given)")
    return verdict


def verify_here(verifier: Verifier, *, workdir: Path, outputs: Mapping[str, object], trace: Path) -> Verification:
    """Run one verifier on `workdir` and `trace` themselves: for a caller that made them a scratch copy."""
    if isinstance(verifier, PythonVerifier):
        return _verify_python(verifier, workdir, outputs, trace)
    if isinstance(verifier, ShellVerifier):
        return _verify_shell(verifier, workdir, outputs, trace)
    return _verify_file(verifier, workdir)


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


# ------------------------------------------------------------------ python


class _TimedOut(BaseException):
    """Raised inside a Python verifier that ran past its timeout (a BaseException, so `except Exception` in it
    cannot swallow it)."""


def _load_module(folder: Path, name: str) -> ModuleType:
    """The module `name` (dotted) from `folder`, loaded without touching `sys.path` for later imports."""
    base = folder.joinpath(*name.split("."))
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    spec = importlib.util.spec_from_file_location(f"_skillc_bench_verifier.{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(folder))  # so the verifier may import its neighbours while it loads
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    return module


def _resolve(verifier: PythonVerifier) -> Callable[..., object]:
    """The verifier's function."""
    module_name, _, function = verifier.target.partition(":")
    fn: object = getattr(_load_module(verifier.folder, module_name), function, None)
    if not callable(fn):
        raise ImportError(f"{module_name} has no function {function!r}")
    return fn


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """Interrupt the main thread after `seconds` with _TimedOut."""
    def on_alarm(signum: int, frame: object) -> None:
        raise _TimedOut

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _call_with_timeout(fn: Callable[[], object], seconds: float) -> object:
    """fn() within `seconds`: by SIGALRM on the main thread, else in a daemon thread that is left behind."""
    if threading.current_thread() is threading.main_thread():
        with _alarm(seconds):
            return fn()
    box: list[object] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            box.append(fn())
        except BaseException as exc:  # handed to the caller, who reports it
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True, name="skillc-bench-verifier")
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise _TimedOut
    if errors:
        raise errors[0]
    return box[0]


def _judge_returned(value: object) -> Verification:
    """A verifier's return value as a verification."""
    if isinstance(value, bool):
        return Verification(value, "" if value else "the verifier returned False")
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bool) and isinstance(value[1], str):
        return Verification(value[0], value[1])
    return Verification(False, f"the verifier returned {value!r:.80}, not a bool or (bool, reason)")


def _verify_python(verifier: PythonVerifier, workdir: Path, outputs: Mapping[str, object],
                   trace: Path) -> Verification:
    """Import and call the function; any exception, exit or timeout is a failure with its reason.

    The module is loaded afresh for each call (an edited verifier takes effect on resume); modules it imports
    from the suite's folder are cached in `sys.modules` like any import.
    """
    try:
        # Importing is timed too: a module that hangs while it loads is the verifier's failure as well.
        value = _call_with_timeout(lambda: _resolve(verifier)(workdir, outputs, trace), verifier.timeout)
    except _TimedOut:
        return Verification(False, f"the verifier {verifier.target} did not return within {verifier.timeout:g} s")
    except KeyboardInterrupt:
        raise
    except SystemExit as exc:
        return Verification(False, f"the verifier {verifier.target} called sys.exit({exc.code!r})")
    except BaseException as exc:  # a verifier is user code: whatever it raises is its failure, not the bench's
        return Verification(False, f"the verifier {verifier.target} raised {type(exc).__name__}: {exc}")
    return _judge_returned(value)


# ------------------------------------------------------------------ shell


def _write_outputs(outputs: Mapping[str, object]) -> str:
    """The outputs as a JSON file outside the workdir (so verifying changes no file there); its path."""
    fd, path = tempfile.mkstemp(prefix="skillc-bench-outputs-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(outputs, f, default=str)
    return path


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the command and everything it started (it leads its own process group)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _tail(data: bytes) -> str:
    """The last line or so of a command's output, for the reason."""
    text = data[-MAX_BYTES:].decode("utf-8", errors="replace").strip()
    return text[-200:]


def _verify_shell(verifier: ShellVerifier, workdir: Path, outputs: Mapping[str, object],
                  trace: Path) -> Verification:
    """Run the command in the workdir in its own process group; the group is killed when it exits or times out."""
    outputs_path = _write_outputs(outputs)
    env = {**os.environ, ENV_WORKDIR: str(workdir), ENV_TRACE: str(trace), ENV_OUTPUTS: outputs_path}
    # Output goes to a file, not a pipe: a background child holding a pipe open would keep us waiting.
    with tempfile.TemporaryFile() as log:
        try:
            proc = subprocess.Popen(["/bin/sh", "-c", verifier.command], cwd=workdir, env=env,
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        except OSError as exc:
            os.unlink(outputs_path)
            return Verification(False, f"the verifier command could not start: {exc.strerror or exc}")
        try:
            proc.wait(timeout=verifier.timeout)
        except subprocess.TimeoutExpired:
            return Verification(False, f"the verifier command did not finish within {verifier.timeout:g} s")
        finally:
            _kill_group(proc)  # what it left running in the background goes too
            proc.wait()
            os.unlink(outputs_path)
        log.seek(max(0, log.seek(0, os.SEEK_END) - MAX_BYTES))
        said = _tail(log.read())
    if proc.returncode == 0:
        return Verification(True)
    return Verification(False, f"the verifier command exited {proc.returncode}" + (f": {said}" if said else ""))


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
    if verifier.matches is not None and not re.search(verifier.matches, text):
        return Verification(False, f"{verifier.path} does not match /{verifier.matches}/ (it holds {text[:60]!r})")
    return Verification(True)
