"""The distiller's pipeline (`distill`, `distill_files`), re-exported by the package."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from skillc.diagnostics import Diagnostic, make
from skillc.diagnostics.diagnostic import HasDiagnostics
from skillc.frontends.distill import codes
from skillc.frontends.distill.cluster import Cluster, cluster, loop_schemas
from skillc.frontends.distill.schema import Program, normalised
from skillc.frontends.distill.segment import Operation, operations
from skillc.frontends.distill.trace import Episode, read_traces

DEFAULT_MIN_REUSE = 0.1
EMITS = ("skm", "python")


@attrs.define
class Distilled(HasDiagnostics):
    """What distillation found: the kept clusters and everything it measured on the way."""

    clusters: list[Cluster]
    programs: list[Program]
    operations: list[Operation]
    loops: frozenset[str]
    diagnostics: list[Diagnostic]
    candidates: int = 0  # clusters before the reuse threshold
    min_reuse: float = DEFAULT_MIN_REUSE

    @property
    def effects(self) -> dict[str, str]:
        """Postcondition sentences of the environment's action schemas."""
        return self.programs[0].profile.effects if self.programs else {}


def distill(traces: Iterable[Episode], *, min_reuse: float = DEFAULT_MIN_REUSE) -> Distilled:
    """Distil clusters from training traces; user problems are diagnostics, never exceptions."""
    normal, diagnostics = normalised(traces)
    programs = [program for _trace, program in normal]
    if not programs:
        diagnostics.append(make(codes.NO_TRACES, "no successful, parsable trace is left to distil",
                                hint="pass JSONL files with one successful trace per line"))
        return Distilled([], [], [], frozenset(), diagnostics, min_reuse=min_reuse)
    ops = [op for p in programs for op in operations(p)]
    loops = loop_schemas(ops)
    everything = cluster(ops, len(programs), loops=loops)
    kept_clusters = [c for c in everything if c.reuse >= min_reuse]
    if not kept_clusters:
        best = max((c.reuse for c in everything), default=0.0)
        diagnostics.append(make(codes.NO_REUSABLE_SKILL,
                                f"no operation is reused in {min_reuse:.0%} of the {len(programs)} traces "
                                f"(the most reused reaches {best:.0%})",
                                hint="lower --min-reuse, or distil from more traces"))
    return Distilled(kept_clusters, programs, ops, loops, diagnostics, len(everything), min_reuse)


def distill_files(paths: Iterable[str], *, min_reuse: float = DEFAULT_MIN_REUSE) -> Distilled:
    """Read JSONL trace files and distil them; unreadable or malformed input stops before clustering."""
    traces, diagnostics = read_traces(paths)
    if any(d.is_error for d in diagnostics):
        return Distilled([], [], [], frozenset(), diagnostics, min_reuse=min_reuse)
    if not traces:
        diagnostics.append(make(codes.NO_TRACES, "the trace files hold no trace",
                                hint="each line of a trace file is one JSON trace; see docs/distill.md"))
        return Distilled([], [], [], frozenset(), diagnostics, min_reuse=min_reuse)
    result = distill(traces, min_reuse=min_reuse)
    result.diagnostics[:0] = diagnostics
    return result


PIPELINE = ("trace.successful", "schema.normalise", "segment.operations", "cluster.cluster",
            "emit_skm.fragment_source", "emit_python.python_source", "verify.verify", "library.write_library")

__all__ = ["DEFAULT_MIN_REUSE", "EMITS", "PIPELINE", "Distilled", "distill", "distill_files"]
