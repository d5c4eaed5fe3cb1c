"""Diagnostic codes of the sandbox (SKM940–SKM949), listed in `skillc.registry`.

SKM940: confined code ran past its time limit. SKM941: confined code was killed by a resource limit. SKM942: the
box could not start. SKM943: the hidden verifier's files changed after the suite was loaded. SKM944: a
confinement layer is missing on this machine. The examples are commands, not machines, so the registry test
does not run them; tests/sandbox/ produces each code from real input.
"""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.codes import Code, E, N

CONFINED_TIMEOUT: Final = Code(
    "SKM940", "confined-timeout", E, "confined code ran past its time limit",
    "Untrusted code (a generated test case, a suite verifier, a `--tools` function, a LangGraph module being "
    "imported) runs in a box with a wall-clock limit. At the limit the box is killed with everything it "
    "started, daemons included, and what it was doing counts as failed.",
    "while True: pass", "return (workdir / 'answer.txt').is_file()",
    "make the code finish sooner, or raise its timeout", runnable=False, lang="python")
CONFINED_LIMIT: Final = Code(
    "SKM941", "confined-limit", E, "confined code was killed by a resource limit",
    "The box limits CPU time, address space, file size and the number of processes. Code that exceeds one is "
    "killed by the kernel (SIGXCPU, SIGXFSZ, SIGKILL, or a MemoryError it did not survive) and counts as failed.",
    "b'x' * (1 << 40)", "b'x' * 1024", "use less memory or CPU, or raise the limit", runnable=False, lang="python")
SANDBOX_START_FAILED: Final = Code(
    "SKM942", "sandbox-start-failed", E, "the box for untrusted code could not start",
    "The box is a supervisor process (Python, standard library only) that starts the code. When it cannot start "
    "(no processes left, the interpreter is gone) nothing of the untrusted code ran.",
    "ulimit -u 1; skillc import langgraph agent:graph", "skillc import langgraph agent:graph",
    "free processes or memory and run it again", runnable=False, lang="text")
VERIFIER_TAMPERED: Final = Code(
    "SKM943", "verifier-tampered", E, "the hidden verifier changed after the suite was loaded",
    "The files of a suite's Python verifier are hashed when the suite is loaded and hashed again before every "
    "verdict. When they differ — a run, a generated case or anyone else rewrote the verifier — the verdict is "
    "a failure with this code, never a pass.",
    "a case that writes `def verify(*a): return True` into verify.py", "cases that only read their scratch copy",
    "restore the verifier's files and run again; look for what rewrote them", runnable=False, lang="text")
CONFINEMENT_DEGRADED: Final = Code(
    "SKM944", "confinement-degraded", N, "a confinement layer is missing on this machine",
    "The box applies the strongest confinement the machine offers: Landlock (writes only in the scratch "
    "folder, reads only of the system, no TCP, no signals out of the box) and user, PID and network "
    "namespaces. A layer the kernel does not offer, or one turned off with SKILLC_SANDBOX_OFF, is reported "
    "with what it would have prevented; the rest still applies (see docs/security.md).",
    "SKILLC_SANDBOX_OFF=landlock skillc evolve …", "skillc evolve …",
    "run on a Linux kernel with Landlock (5.13+, TCP rules 6.7+) and unprivileged user namespaces",
    runnable=False, lang="text")

ALL: Final[tuple[Code, ...]] = (CONFINED_TIMEOUT, CONFINED_LIMIT, SANDBOX_START_FAILED, VERIFIER_TAMPERED,
                                CONFINEMENT_DEGRADED)
