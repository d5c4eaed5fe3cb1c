"""A bench's processes die with it: its pool's fork server and workers are killed by the kernel when their
parent dies (Linux `PR_SET_PDEATHSIG`), so a bench killed with SIGKILL leaves none of them holding its stdout.

The fork server imports this module (it is preloaded, never imported by the bench itself) and arms itself when
`SKILLC_BENCH_PARENT` names its parent, the bench; each worker arms itself in the pool's initializer, its parent
being the fork server. Elsewhere than Linux nothing is armed. A worker the fork server starts just as the bench
stops finds its pool gone; it exits without printing a traceback on the bench's stderr.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import traceback
from types import TracebackType

#: Set by the bench to its own process id before it starts its pool's fork server.
PARENT_ENV = "SKILLC_BENCH_PARENT"
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Ask for SIGKILL when this process's parent dies; exit now if `parent` is already gone."""
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request was made
        os._exit(1)


def _arm_fork_server() -> None:
    """At import in the pool's fork server: die with the bench that started it, and have the workers it starts
    stay quiet when their pool is already gone."""
    parent = os.environ.get(PARENT_ENV)
    if parent is not None and parent == str(os.getppid()):
        die_with_parent(int(parent))
        sys.excepthook = _quiet_when_pool_gone


def _quiet_when_pool_gone(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
    """A worker's uncaught exception, printed as usual, except the one of a worker started just as the bench
    stopped: its pool's semaphores were removed before it could read them (FileNotFoundError in
    `SemLock._rebuild`), so it has nothing to do and exits without a traceback on the bench's stderr."""
    frames = traceback.extract_tb(trace)
    if issubclass(kind, FileNotFoundError) and frames and frames[-1].filename.endswith("synchronize.py"):
        return
    sys.__excepthook__(kind, error, trace)


_arm_fork_server()
