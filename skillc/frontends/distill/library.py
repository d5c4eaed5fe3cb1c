"""The library directory: one `.skm` fragment and one Python skill per cluster, plus `library.json`.

    LIBRARY_DIR/
      library.json          every skill's shape, parameters, metadata and verification
      fragments/NAME.skm    the fragment (checked; `import` it and `use` it)
      skills/__init__.py    SKILLS: name -> function
      skills/_runtime.py    the runtime the skills share (standard library only)
      skills/NAME.py        the skill function

`write_library` builds the whole directory beside the target and swaps it in,
so a failed run never leaves a half-written library.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from skillc.diagnostics import Diagnostic
from skillc.diagnostics.diagnostic import HasDiagnostics
from skillc.frontends.distill import DEFAULT_MIN_REUSE, Distilled, distill_files
from skillc.frontends.distill.cluster import Cluster
from skillc.frontends.distill.emit_python import RUNTIME, describe, metadata, package_init, python_source
from skillc.frontends.distill.emit_skm import fragment_source
from skillc.frontends.distill.trace import read_traces
from skillc.frontends.distill.verify import Evaluation, Skill, verify

if TYPE_CHECKING:
    from skillc.runtime.jsonvalue import Object

_COUNTER = itertools.count()


def skill_sources(distilled: Distilled, clusters: Iterable[Cluster], verification: Object | None = None,
                  emit: Iterable[str] = ("skm", "python")) -> dict[str, str]:
    """Every file of the library directory, by relative path."""
    clusters = list(clusters)
    verification = verification or {}
    n = len(distilled.programs)
    files: dict[str, str] = {}
    emit = set(emit)
    metas = {c.name: metadata(c, n, verification.get(c.name)) for c in clusters}
    for c in clusters:
        meta = metas[c.name]
        if "skm" in emit:
            ppc = meta["primitives_per_call"]
            binds = ", ".join(f"{p.name}: {p.name}" for p in c.params) + (", observation: observation, "
                                                                            "admissible: admissible, error: error")
            header = (f"# Distilled by skillc from {n} training traces: r_k = {c.reuse:.2f}, "
                      f"{ppc['min']}-{ppc['max']} primitive actions per call ({ppc['mean']} on average).\n"
                      "# A machine that uses it declares the same two tools (see docs/distill.md):\n"
                      f"#   import \"fragments/{c.name}.skm\"\n"
                      f"#   use {c.name} as {c.name}({binds}) -> (done: NEXT, failed: fallback)\n\n")
            files[f"fragments/{c.name}.skm"] = fragment_source(c, header)
        if "python" in emit:
            files[f"skills/{c.name}.py"] = python_source(c, distilled.effects, meta)
    if "python" in emit:
        files["skills/__init__.py"] = package_init(clusters)
        files["skills/_runtime.py"] = RUNTIME.read_text()
    files["library.json"] = json.dumps(library_json(distilled, clusters, metas), indent=2) + "\n"
    return files


def library_json(distilled: Distilled, clusters: list[Cluster], metas: dict[str, Object]) -> Object:
    """The machine-readable description of the library (`metas`: each skill's `metadata`)."""
    return {
        "format": "skillc-library/1",
        "training_traces": len(distilled.programs),
        "operations": len(distilled.operations),
        "candidate_clusters": distilled.candidates,
        "min_reuse": distilled.min_reuse,
        "skills": [{
            **metas[c.name],
            "steps": [{"core": s.core.shown, "loop": s.loop, "bound": s.bound,
                       "support": [{"action": g.slot.shown, "share": round(g.share, 4)} for g in s.pre]}
                      for s in c.steps],
            "parameters": [{"name": p.name, "role": p.role, "entity": p.entity, "list": p.listed,
                            "optional": p.optional, "types": list(p.types), "seen": list(p.values)}
                           for p in c.params],
            **describe(c, distilled.effects),
        } for c in clusters],
    }


def load_skills(distilled: Distilled, clusters: Iterable[Cluster]) -> dict[str, Skill]:
    """Generate the Python skills into a temporary package and import them: name → function."""
    clusters = list(clusters)
    files = skill_sources(distilled, clusters, emit=("python",))
    package = f"skillc_distilled_{os.getpid()}_{next(_COUNTER)}"
    # Importing runs every module (the package imports them all), so the files are not needed afterwards.
    with tempfile.TemporaryDirectory(prefix="skillc-skills-") as folder:
        root = Path(folder) / package
        for rel, text in files.items():
            if rel.startswith("skills/"):
                target = root / rel.removeprefix("skills/")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
        return import_package(root)


def import_package(root: Path) -> dict[str, Skill]:
    """Import a skills package from its folder; returns its `SKILLS`."""
    spec = importlib.util.spec_from_file_location(root.name, root / "__init__.py",
                                                  submodule_search_locations=[str(root)])
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import the skills package at {root}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[root.name] = module
    spec.loader.exec_module(module)
    return dict(module.SKILLS)


def target_problem(out: str | Path) -> str | None:
    """Why `out` cannot receive a library, or None: only an empty folder or an earlier library is replaced."""
    out = Path(out).resolve()
    if out.exists() and not out.is_dir():
        return f"{out} is a file, not a library folder"
    if out.is_dir() and any(out.iterdir()) and not (out / "library.json").is_file():
        return f"{out} holds files but no library.json: refusing to replace a folder that is not a skill library"
    if out.parent == out:
        return f"{out} is the root folder"
    if not out.parent.is_dir():
        return f"no such folder for the output: {out.parent}"
    return None


def write_library(files: dict[str, str], out: str | Path) -> None:
    """Write the library directory: built beside `out`, then swapped in whole."""
    out = Path(out).resolve()
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for rel, text in files.items():
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        old = None
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            os.replace(out, old)
        os.replace(staging, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


@attrs.define
class Built(HasDiagnostics):
    """A whole `skillc distill` run: the files to write, the kept skills and the held-out evaluation."""

    distilled: Distilled
    clusters: list[Cluster]
    files: dict[str, str]
    diagnostics: list[Diagnostic]
    evaluation: Evaluation | None = None
    dropped: list[Cluster] = attrs.field(factory=list)


def build_library(paths: Iterable[str], *, heldout: Iterable[str] = (), min_reuse: float = DEFAULT_MIN_REUSE,
                  emit: Iterable[str] = ("skm", "python"), games: str | Path | None = None,
                  progress: Callable[[int], None] | None = None) -> Built:
    """Distil trace files into a library; with held-out traces, keep only the skills that run without error.

    `progress(n)` is told of every held-out game played (verification may replay them a few rounds).
    """
    distilled = distill_files(paths, min_reuse=min_reuse)
    diagnostics = list(distilled.diagnostics)
    if not distilled.ok or not distilled.clusters:
        return Built(distilled, [], {}, diagnostics)
    clusters, evaluation = list(distilled.clusters), None
    heldout = list(heldout)
    if heldout:
        traces, problems = read_traces(heldout)
        diagnostics += problems
        if any(d.is_error for d in problems):
            return Built(distilled, [], {}, diagnostics)
        skills = load_skills(distilled, clusters)
        clusters, evaluation, problems = verify(distilled, skills, traces, games=games, progress=progress)
        diagnostics += problems
    verification = {name: s.to_json() for name, s in {**evaluation.skills, **evaluation.dropped}.items()} \
        if evaluation else {}
    dropped = [c for c in distilled.clusters if c not in clusters]
    return Built(distilled, clusters, skill_sources(distilled, clusters, verification, emit), diagnostics,
                 evaluation, dropped)
