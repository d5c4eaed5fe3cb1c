"""The local backend: in-process in order, a process pool unordered, a dead worker a BackendError."""

from __future__ import annotations

import math
import os

import pytest

from skillc.bench.backends import BackendError, LocalBackend


def test_one_worker_runs_in_this_process_in_order() -> None:
    """workers=1: the jobs run here, one after another, results in the jobs' order."""
    seen: list[int] = []

    def record(x: int) -> int:  # a closure: only possible without pickling
        seen.append(x)
        return x * x

    backend = LocalBackend(1)
    assert list(backend.map_unordered(record, [3, 1, 2])) == [9, 1, 4]
    assert seen == [3, 1, 2]
    backend.close()


def test_a_pool_returns_every_result() -> None:
    """workers=2: every job's result comes back once (in any order), from other processes."""
    backend = LocalBackend(2)
    try:
        results = list(backend.map_unordered(math.factorial, list(range(40))))
        assert sorted(results) == sorted(math.factorial(n) for n in range(40))
        pids = set(backend.map_unordered(_pid, list(range(8))))
        assert os.getpid() not in pids
    finally:
        backend.close()
    backend.close()  # idempotent


def _pid(_: int) -> int:
    """The worker's process id."""
    return os.getpid()


def test_a_dead_worker_is_a_backend_error() -> None:
    """A worker killed mid-job (here: it exits) is reported as BackendError, not a crash of the caller."""
    _every_worker_dies()


def _every_worker_dies() -> None:
    """A pool of 2 whose jobs all exit their worker: BackendError, and the pool closes."""
    backend = LocalBackend(2)
    try:
        with pytest.raises(BackendError, match="worker process died"):
            list(backend.map_unordered(os._exit, [1, 1, 1]))
    finally:
        backend.close()


def test_no_jobs() -> None:
    """An empty job list yields nothing and starts no pool."""
    backend = LocalBackend(4)
    assert list(backend.map_unordered(abs, [])) == []
    backend.close()


def test_workers_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LocalBackend(0)


def test_workers_dying_at_once_never_leave_the_caller_waiting() -> None:
    """Every worker runs before the first job is queued: a worker dying while the pool would still be starting
    another is BackendError each time (CPython's on-demand start raced the pool's teardown: an OSError from the
    fork server, or a worker given closed pipes and a caller waiting for good; about 1 run in 25 before)."""
    for _ in range(30):
        _every_worker_dies()

