"""Where bench cells run: the `Backend` protocol and the local process pool.

A backend maps a top-level function over picklable jobs and yields the results as they complete (in
any order); the runner writes each result as it arrives, so what a killed bench finished is kept.
`LocalBackend(1)` runs the jobs one after another in this process (no pickling, real tracebacks);
`LocalBackend(n)` runs them in a pool of `n` worker processes started from a fork server (so a
worker never inherits the parent's threads: the progress bar's, a model's). `skillc.bench.ray_backend.RayBackend`
is written against the same protocol; the runner's `make_backend` chooses between them.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol, TypeVar

from skillc.bench import codes
from skillc.diagnostics import Diagnostic, make

J = TypeVar("J")
R = TypeVar("R")

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
        """The pool, started on first use."""
        if self._pool is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["skillc.bench.runner"])  # workers start with the runner imported
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context)
        return self._pool

    def close(self) -> None:
        """Stop the pool's workers (after the jobs they are running)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _submit(pool: ProcessPoolExecutor, fn: Callable[[J], R], job: J) -> Future[R]:
    """Queue one job; a pool broken by a dead worker becomes BackendError."""
    try:
        return pool.submit(fn, job)
    except BrokenProcessPool as exc:
        raise BackendError(f"a worker process died ({exc})") from None


def _result(future: Future[R]) -> R:
    """A finished job's result; a dead worker becomes BackendError."""
    try:
        return future.result()
    except BrokenProcessPool as exc:
        raise BackendError(f"a worker process died ({exc})") from None
