"""The distiller: `skillc distill TRACES… -o LIBRARY_DIR`.

Pipeline (one module per stage, in `PIPELINE` order): `trace` (read and
validate JSONL, leave failed runs out) → `schema` (actions → action schemas
with typed arguments) → `segment` (sub-goal operations) → `cluster`
(parameterised control flow, loops folded, support actions guarded, r_k) →
`emit_skm` / `emit_python` (a fragment and a Python skill per cluster) →
`verify` (execute the skills on held-out games; drop those that fail) →
`library` (write the directory atomically) and `report`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillc.lazy import exports

# The pipeline lives in `pipeline.py` and loads on first use, so that importing a submodule
# (`skillc.frontends.distill.codes`, read by `skillc.registry`) does not load the whole front end.
_NAMES = (
    "DEFAULT_MIN_REUSE", "Distilled", "EMITS", "PIPELINE", "distill", "distill_files", "Cluster", "loop_schemas",
    "Program", "normalised", "Operation", "operations", "Episode", "read_traces", "Diagnostic", "make",
    "HasDiagnostics",
)
__getattr__ = exports(__name__, dict.fromkeys(_NAMES, "skillc.frontends.distill.pipeline"))

if TYPE_CHECKING:
    from skillc.frontends.distill.pipeline import DEFAULT_MIN_REUSE, Distilled, distill, distill_files

__all__ = ["DEFAULT_MIN_REUSE", "EMITS", "PIPELINE", "Distilled", "distill", "distill_files"]
