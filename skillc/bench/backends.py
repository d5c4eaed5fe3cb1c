"""Where bench cells run: the `Backend` protocol and the local process pool.

A backend maps a top-level function over picklable jobs and yields the results as they complete (in
any order); the runner writes each result as it arrives, so what a killed bench finished is kept.
`LocalBackend(1)` runs the jobs one after another in this process (no pickling, real tracebacks);
`LocalBackend(n)` runs them in a pool of `n` worker processes started from a fork server (so a
worker never inherits the parent's threads: the progress bar's, a model's). Every worker is started
before the first job is queued: CPython's pool otherwise starts workers as jobs arrive, and starting one
while the pool tears itself down after another died hands the new worker pipes that are being closed
(an OSError, or a worker that never answers and a caller that waits for good).
`skillc.bench.ray_backend.RayBackend` is written against the same protocol; the runner's `make_backend`
chooses between them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol, TypeVar

from skillc.bench import codes
from skillc.bench.orphans import PARENT_ENV, die_with_parent
from skillc.diagnostics import Diagnostic, make

J = TypeVar("J")
R = TypeVar("R")

#: How long each start-up job holds its worker, so that the next one queued finds none idle and starts another.
_HOLD_S = 0.05


class BackendError(Exception):
    """The backend itself failed (a worker process died, the cluster went away); the message says how."""

    def diagnostic(self) -> Diagnostic:
        """The failure as a coded diagnostic (SKM735; a backend's own subclass may have a code of its own)."""
        return make(codes.BACKEND_FAILED, str(self))


class Backend(Protocol):
    """Runs jobs somewhere and yields their results as they complete."""

    def map_unordered(self, fn: Callable[[J], R], jobs: Sequence[J]) -> Iterator[R]:
        """`fn(job)` for every job, yielded in order of completion; BackendError when the backend fails."""
        ...

    def close(self) -> None:
        """Release the workers (idempotent)."""
        ...


class LocalBackend:
    """`workers` = 1: in this process, in order; more: a process pool of that size."""

    def __init__(self, workers: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def map_unordered(self, fn: Callable[[J], R], jobs: Sequence[J]) -> Iterator[R]:
        """Run the jobs; results come back as each one finishes."""
        if self.workers == 1:
            for job in jobs:
                yield fn(job)
            return
        yield from self._pooled(fn, jobs)

    def _pooled(self, fn: Callable[[J], R], jobs: Sequence[J]) -> Iterator[R]:
        """The pool's results; at most two jobs per worker are queued, so stopping early leaves little running."""
        pool = self._start()
        queue = list(reversed(jobs))  # popped from the end: the jobs in their order
        running: set[Future[R]] = set()
        try:
            while queue and len(running) < 2 * self.workers:
                running.add(_submit(pool, fn, queue.pop()))
            while running:
                done, running = wait(running, return_when=FIRST_COMPLETED)
                # Finished results first: a job that failed with the pool must not hide the ones that ended.
                for future in sorted(done, key=lambda f: f.exception() is not None):
                    yield _result(future)
                    if queue:
                        running.add(_submit(pool, fn, queue.pop()))
        finally:
            for future in running:
                future.cancel()

    def _start(self) -> ProcessPoolExecutor:
        """The pool, started on first use with all its workers running; Ctrl-C and SIGTERM take effect after it
        started (one arriving while a worker process is being started would leave that worker half made, and
        printing a traceback once the bench has gone)."""
        with _stops_deferred():
            return self._start_now()

    def _start_now(self) -> ProcessPoolExecutor:
        """`_start` with the stop signals already deferred."""
        if self._pool is None:
            context = multiprocessing.get_context("forkserver")
            # Workers start with the runner imported; the fork server and the workers die with the bench
            # (skillc.bench.orphans), so a bench killed with SIGKILL leaves none of them behind.
            os.environ[PARENT_ENV] = str(os.getpid())
            context.set_forkserver_preload(["skillc.bench.runner", "skillc.bench.orphans"])
            pool = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_arm_worker)
            try:
                _start_workers(pool, self.workers)
            except BaseException:
                # Wait for the workers being started: a worker the fork server is still starting reads the pool's
                # semaphores, which a shutdown that does not wait removes first (a traceback from the worker on
                # the bench's stderr when SIGTERM or Ctrl-C came during start-up).
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            self._pool = pool
        return self._pool

    def close(self) -> None:
        """Stop the pool's workers (after the jobs they are running)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _start_workers(pool: ProcessPoolExecutor, workers: int) -> None:
    """Have the pool start every worker now: jobs that each hold a worker a moment, until `workers` answered."""
    seen: set[int] = set()
    for attempt in range(1, 4):  # the holds overlap unless the machine stalls; a longer one each time
        futures = [_submit(pool, _hold, _HOLD_S * attempt) for _ in range(workers)]
        seen.update(_result(future) for future in futures)
        if len(seen) >= workers:
            return


_STOPS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _stops_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM noted while the block runs (on the main thread) and raised again after it, so the handler
    the command installed sees them once the block is done (any thread may receive the signal: masking it in
    one would not hold it)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in _STOPS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)
        if caught:
            signal.raise_signal(caught[0])


def _arm_worker() -> None:
    """A worker's first act: die with its parent, the fork server (which dies with the bench)."""

    die_with_parent(os.getppid())


def _hold(seconds: float) -> int:
    """A start-up job: keep this worker busy a moment; its process id."""
    time.sleep(seconds)
    return os.getpid()


def _submit(pool: ProcessPoolExecutor, fn: Callable[[J], R], job: J) -> Future[R]:
    """Queue one job; a pool broken by a dead worker (or unable to start one) becomes BackendError."""
    try:
        return pool.submit(fn, job)
    except BrokenProcessPool as exc:
        raise BackendError(f"a worker process died ({exc})") from None
    except (OSError, EOFError) as exc:  # the fork server could not start a worker
        raise BackendError(f"a worker process could not be started ({exc})") from None


def _result(future: Future[R]) -> R:
    """A finished job's result; a dead worker becomes BackendError."""
    try:
        return future.result()
    except BrokenProcessPool as exc:
        raise BackendError(f"a worker process died ({exc})") from None
