"""Refusals before a run starts: nothing a user gave by mistake is overwritten or silently ignored."""

from __future__ import annotations

import os
from collections.abc import Iterable

from skillc.diagnostics.files import same_file
from skillc.runtime.executors.base import absolute_spec
from skillc.runtime.interpreter import RunError
from skillc.runtime.journal import RunInfo


def refuse_trace_target(trace: str | None, protected: Iterable[str | None]) -> None:
    """A trace never overwrites the machine, the journal or another input, nor a file that is not a trace."""
    if not trace:
        return
    for p in protected:
        if p and same_file(trace, p):
            raise RunError(f"--trace {trace} is {p}, which the run reads: the trace would overwrite it")
    try:
        if not os.path.isfile(trace) or os.path.getsize(trace) == 0:
            return
        with open(trace, "rb") as f:
            first = f.readline(1 << 16)
    except (OSError, ValueError):
        return  # the trace writer reports what is wrong with the path
    if not first.lstrip().startswith(b'{"type": "header"'):
        raise RunError(f"--trace {trace} exists and is not a skillc trace; refusing to overwrite it "
                       "(remove it or pick another path)")


def refuse_resume_changes(info: RunInfo, executor: str | None, inputs_given: bool, trace: str | None,
                          machine: str | None) -> None:
    """`--resume` continues a run as it started: other inputs, executor or trace are refused, not ignored."""
    if inputs_given:
        raise RunError(f"run `{info.run_id}` continues with the inputs it started with; drop --input and "
                       "--input-file when resuming")
    if executor and executor != info.executor and absolute_spec(executor) != info.executor:
        raise RunError(f"run `{info.run_id}` was started with --executor {info.executor}; resume it with the "
                       "same executor (or without --executor)")
    if trace and not (info.trace_path and os.path.abspath(trace) == os.path.abspath(info.trace_path)):
        raise RunError(f"run `{info.run_id}` appends to its own trace ({info.trace_path or 'none'}); "
                       "drop --trace when resuming")
    del machine  # a different machine is refused by its content hash when the run is loaded


def resumed_places(info: RunInfo, workdir: str | None, skill_dir: str | None) -> tuple[str | None, str | None]:
    """The folders a resumed run continues in: those named again (`--workdir`, `--skill-dir`), else those it last ran
    in (its journal keeps them). A kept skill folder that is gone is dropped (the machine's default stands in, and a
    machine that needs one is refused as any run without one); a gone work folder is refused by the resume itself,
    once it knows the run did not end already (`Interpreter.resume`)."""
    kept_skill = info.skill_dir if info.skill_dir is not None and os.path.isdir(info.skill_dir) else None
    return (workdir if workdir is not None else info.workdir,
            skill_dir if skill_dir is not None else kept_skill)
