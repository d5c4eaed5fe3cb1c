"""The README experiment (issue 18, item 6): the shipped suites on the embedded local model, every run real.

    python bench/experiment.py [--executor SPEC] [--out DIR] [--docs DIR] [--livemath-tasks N]
                               [--warehouse-machine-tasks T25-s1 …] [--only livemath|warehouse] [--publish-only]

1. livemath: `skillc bench examples/livemath/bench/suite.toml --modes machine,native,prompt-only
   --executor SPEC -o OUT/livemath` — every task in all three modes on one executor, one cell at a time.
2. warehouse: the local model through `skillc bench examples/warehouse/bench/suite.toml` in native mode at
   every horizon and in machine mode on the tasks given (T = 25 and 50 by default: a machine run makes one or
   two model calls an event, 7–8 minutes at T = 50 on 2 shared cores), beside the full curve of
   `bench/tokens.py` (both modes driven by the oracle policy, a perfect model, through the real runtime and a
   real native agent loop).

Each `skillc bench` command is printed before it runs and is resumable: a killed experiment continues where
it stopped when run again (the rows already written are kept, no cell runs twice). A subset (`--livemath-tasks
N`, the warehouse machine tasks) is run from a mirror of the suite's folder under OUT whose task file keeps only the
chosen tasks, and the report says so. The results are then published under DOCS: experiments/livemath-local/
(results.jsonl, report.md), experiments/warehouse-tokens/ (the same, with the oracle curve) and the charts
img/livemath-local.png and img/warehouse-tokens.png. `--publish-only` redraws them from OUT without running.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skillc.bench.report import GroupSummary, build_report, to_markdown  # noqa: E402
from skillc.bench.results import Row, read_results  # noqa: E402

# One thread: on the 2 shared cores under load (load average ~9) a 1,100-token prompt took 30 s with one
# thread and 60 s with two (llama.cpp's threads wait on each other when one is descheduled).
EXECUTOR = "local?n_ctx=8192&max_tokens=256&threads=1"
LIVEMATH = ROOT / "examples" / "livemath" / "bench" / "suite.toml"
WAREHOUSE = ROOT / "examples" / "warehouse" / "bench" / "suite.toml"
MODES = ("machine", "native", "prompt-only")
SKILLC = str(Path(sys.executable).parent / "skillc")


@attrs.frozen
class Bench:
    """One `skillc bench` invocation: the suite it ran (possibly a subset's mirror), its modes and its output."""

    suite: Path
    modes: tuple[str, ...]
    executor: str
    out: Path
    model_timeout_s: float

    def command(self) -> list[str]:
        """The command line, as a user would type it."""
        return [SKILLC, "bench", str(self.suite), "--modes", ",".join(self.modes), "--executor", self.executor,
                "--workers", "1", "--model-timeout", f"{self.model_timeout_s:g}", "-o", str(self.out)]

    def ran(self) -> str:
        """The command that made the rows in `out` (kept there by `run`), else this one."""
        kept = self.out / "command.txt"
        return kept.read_text(encoding="utf-8").strip() if kept.is_file() else self.shown()

    def shown(self) -> str:
        """The command with paths relative to the checkout, for the report."""
        words = ["skillc", *self.command()[1:]]
        return shlex.join(os.path.relpath(w, ROOT) if w.startswith(str(ROOT)) else w for w in words)


def run(bench: Bench) -> None:
    """Run the bench (niced, its progress on this terminal); stop the experiment if it did not finish."""
    print("$", bench.shown(), flush=True)
    bench.out.mkdir(parents=True, exist_ok=True)
    (bench.out / "command.txt").write_text(bench.shown() + "\n", encoding="utf-8")
    code = subprocess.call(["nice", *bench.command()], cwd=ROOT)
    if code != 0:
        raise SystemExit(f"skillc bench exited {code}; run the experiment again to continue where it stopped")


# ---------------------------------------------------------------- subsets


def mirror(suite: Path, keep: Callable[[dict[str, object]], bool], folder: Path) -> tuple[Path, int, int]:
    """A copy of the suite's folder and its parent's files, whose task file keeps only the tasks `keep` accepts.

    The suite file is copied unchanged, so every path in it (`../SKILL.md`, fixtures, verifiers) finds a copy
    of the original at the same place; only `tasks.jsonl` is replaced. Copies, not links: a suite runs no
    module and copies no fixture from outside its root (SKM745). Returns the mirrored suite, kept and all tasks.
    """
    source = suite.parent
    for sibling in (source.parent, source):
        target = folder / sibling.relative_to(source.parent)
        target.mkdir(parents=True, exist_ok=True)
        for entry in sibling.iterdir():
            copy = target / entry.name
            if entry == source or (sibling == source and entry.name in ("tasks.jsonl", suite.name)):
                continue
            if copy.is_symlink() or copy.is_file():
                copy.unlink()
            elif copy.is_dir():
                shutil.rmtree(copy)
            if entry.is_dir():
                shutil.copytree(entry, copy, ignore=shutil.ignore_patterns("__pycache__", ".skillc"))
            else:
                shutil.copy2(entry, copy)
    (folder / source.name / suite.name).write_bytes(suite.read_bytes())
    # The mirror is a project of its own, so `../` paths inside it stay inside the suite's root.
    (folder / "skillc.toml").write_text(f"# A task subset of {suite}, made by bench/experiment.py.\n", encoding="utf-8")
    lines = [ln for ln in (source / "tasks.jsonl").read_text(encoding="utf-8").splitlines() if ln.strip()]
    kept = [ln for ln in lines if keep(json.loads(ln))]
    (folder / source.name / "tasks.jsonl").write_text("".join(ln + "\n" for ln in kept), encoding="utf-8")
    return folder / source.name / suite.name, len(kept), len(lines)


# ---------------------------------------------------------------- tables


def _pct(x: float) -> str:
    return "–" if math.isnan(x) else f"{100 * x:.0f}%"


def _rate(k: int, n: int, low: float, high: float) -> str:
    return f"{k}/{n} ({_pct(k / n if n else math.nan)}) [{_pct(low)}, {_pct(high)}]"


def mode_table(rows: Sequence[Row]) -> str:
    """Per mode: success and RFC with 95% Wilson intervals, mean tokens per task, wall time, outcomes."""
    report = build_report(rows, resamples=2_000)
    head = ["mode", "tasks", "success [95% CI]", "RFC [95% CI]", "mean prompt tokens / task",
            "mean total tokens / task", "mean steps", "wall time (total; per task)", "outcomes (s/p/f)", "errors"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in report.summaries:
        mine = [r for r in rows if r.cell.mode == s.mode and r.cell.executor == s.executor]
        wall = sum(r.latency_s for r in mine)
        outcomes = "/".join(str(sum(1 for r in mine if r.outcome == o)) for o in ("success", "partial", "failed"))
        lines.append("| " + " | ".join([
            s.mode, str(s.cells), _rate(s.successes, s.verified, s.success.low, s.success.high),
            _rate(s.compliant, s.judged, s.rfc.low, s.rfc.high), f"{s.mean_prompt_tokens:,.0f}",
            f"{s.mean_total_tokens:,.0f}", f"{s.mean_steps:.1f}", f"{wall / 60:.1f} min; {s.mean_latency_s:.1f} s",
            outcomes, str(s.errors)]) + " |")
    return "\n".join(lines) + "\n"


def demoted(markdown: str) -> str:
    """Every Markdown heading one level down (the bench's report becomes a section of ours)."""
    return "".join("#" + ln if ln.startswith("#") else ln for ln in markdown.splitlines(keepends=True))


def violations(rows: Sequence[Row]) -> str:
    """How often each requirement was violated, per mode."""
    ids = sorted({v for r in rows for v in r.violated})
    if not ids:
        return "No requirement was violated.\n"
    modes = list(dict.fromkeys(r.cell.mode for r in rows))
    lines = ["| requirement | " + " | ".join(modes) + " |", "|---|" + "---|" * len(modes)]
    for i in ids:
        counts = [sum(1 for r in rows if r.cell.mode == m and i in r.violated) for m in modes]
        lines.append(f"| {i} | " + " | ".join(str(c) for c in counts) + " |")
    return "\n".join(lines) + "\n"


def provenance(commands: Sequence[str], note: str) -> str:
    """When, on what and how the figures were made."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    cpus = os.cpu_count()
    shown = "\n".join(commands)
    return (f"Made {when} from commit {commit} (plus the working tree), on {cpus} CPU cores shared with other "
            f"jobs, by `python bench/experiment.py`, which ran:\n\n```sh\n{shown}\n```\n\n{note} The rows are in "
            "results.jsonl beside this file; their trace paths are relative to the bench's `-o` folder, whose "
            "traces and workdirs are not committed.\n")


# ---------------------------------------------------------------- charts


def _save(fig: object, path: Path) -> None:
    """Write a figure as PNG without a timestamp or software tag (same rows, same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", metadata={"Software": None})  # type: ignore[attr-defined]


def guessing_rate(rows: Sequence[Row], suite: Path) -> tuple[str, float] | None:
    """The best success a constant answer gets on the rows' tasks (their verifiers' `equals`), and that answer."""
    lines = suite.with_name("tasks.jsonl").read_text(encoding="utf-8").splitlines()
    tasks = {r.cell.task for r in rows}
    answers = [t.get("verify", {}).get("equals") for t in map(json.loads, filter(str.strip, lines)) if t["id"] in tasks]
    if not answers or None in answers:
        return None
    best = max(set(answers), key=answers.count)
    return best, answers.count(best) / len(answers)


def livemath_chart(rows: Sequence[Row], title: str, path: Path, chance: tuple[str, float] | None = None) -> None:
    """Success and RFC per mode with their intervals, and mean prompt and completion tokens per task."""
    from matplotlib.figure import Figure

    summaries: list[GroupSummary] = list(build_report(rows, resamples=200).summaries)
    fig = Figure(figsize=(9.0, 3.6), dpi=100, layout="constrained")
    rates, tokens = fig.subplots(1, 2)
    x = range(len(summaries))
    for offset, name, pick in ((-0.2, "task success", lambda s: (s.success, s.successes, s.verified)),
                               (0.2, "RFC", lambda s: (s.rfc, s.compliant, s.judged))):
        est, low, high = [], [], []
        for s in summaries:
            interval, _, n = pick(s)
            e = interval.estimate if n else 0.0
            est.append(e)
            low.append(max(0.0, e - interval.low) if n else 0.0)
            high.append(max(0.0, interval.high - e) if n else 0.0)
        bars = rates.bar([i + offset for i in x], est, 0.4, yerr=[low, high], capsize=4, label=name)
        rates.bar_label(bars, labels=[f"{pick(s)[1]}/{pick(s)[2]}" for s in summaries], fontsize=8, padding=2)
    if chance is not None:
        rates.axhline(chance[1], color="grey", linestyle="--", linewidth=1)
        rates.text(len(summaries) - 0.5, chance[1], f"always answering {chance[0]}", fontsize=7, color="grey",
                   ha="right", va="bottom")
    rates.set_xticks(list(x), [s.mode for s in summaries])
    rates.set_ylim(0, 1.1)
    rates.set_ylabel("rate (95% Wilson CI)")
    rates.legend(loc="upper right", fontsize=8)
    rates.set_title(title, fontsize=9)
    prompt = [s.mean_prompt_tokens for s in summaries]
    completion = [s.mean_completion_tokens for s in summaries]
    tokens.bar(list(x), prompt, 0.6, label="prompt")
    tokens.bar(list(x), completion, 0.6, bottom=prompt, label="completion")
    tokens.set_xticks(list(x), [s.mode for s in summaries])
    tokens.set_ylabel("mean tokens per task")
    tokens.legend(fontsize=8)
    tokens.set_title("tokens per task", fontsize=9)
    _save(fig, path)


@attrs.frozen
class OraclePoint:
    """One horizon of bench/tokens.py: a mode's total prompt tokens over the run, and the run's steps."""

    horizon: int
    mode: str
    total_prompt_tokens: int
    largest_prompt_tokens: int
    steps: int
    calls_over_context: int


def oracle_curve(horizons: Sequence[int], shelves: int) -> tuple[list[OraclePoint], int]:
    """bench/tokens.py's measurement (oracle policy, both modes, real tools) and the model's trained context."""
    sys.path.insert(0, str(ROOT / "examples" / "warehouse"))
    from bench.tokens import PromptTokens, measure

    count = PromptTokens()
    points = []
    for t in horizons:
        print(f"oracle runs at T = {t}", flush=True)
        for mode, (steps, tokens, _accuracy, _seconds) in measure(t, shelves, count).items():
            points.append(OraclePoint(t, mode, sum(tokens), max(tokens), steps,
                                      sum(1 for n in tokens if n > count.context)))
    return points, count.context


def largest_prompt(row: Row, out: Path) -> int:
    """The longest single prompt of a local run, from its trace (0 when it has none)."""
    from skillc.runtime.record import TraceError, load_run

    if row.trace is None:
        return 0
    try:
        steps = load_run(out / row.trace).steps
    except (TraceError, OSError):
        return 0
    return max((s.input_tokens or 0 for s in steps), default=0)


def warehouse_chart(oracle: Sequence[OraclePoint], local: Sequence[tuple[Row, int]], context: int,
                    path: Path) -> None:
    """Against the horizon: prompt tokens summed over a run, and the longest prompt; oracle lines, local points."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10.0, 4.0), dpi=100, layout="constrained")
    total, largest = fig.subplots(1, 2)
    colours = {"machine": "tab:blue", "native": "tab:orange"}
    for ax, oracle_value, local_value in ((total, lambda p: p.total_prompt_tokens, lambda r, m: r.prompt_tokens),
                                          (largest, lambda p: p.largest_prompt_tokens, lambda r, m: m)):
        for mode in ("machine", "native"):
            pts = sorted((p for p in oracle if p.mode == mode), key=lambda p: p.horizon)
            if pts:
                ax.plot([p.horizon for p in pts], [oracle_value(p) for p in pts], marker="o", color=colours[mode],
                        label=f"{mode}, oracle policy")
            mine = [(r, m) for r, m in local if r.cell.mode == mode and r.horizon is not None]
            if mine:
                ax.scatter([r.horizon for r, _ in mine], [max(1, local_value(r, m)) for r, m in mine], marker="x",
                           s=70, color=colours[mode], label=f"{mode}, local Gemma 3 270M (one x a run)")
        ax.set_yscale("log")
        ax.set_xlabel("horizon T (events in the log)")
    largest.axhline(context, color="grey", linestyle=":", linewidth=1)
    largest.text(min(p.horizon for p in oracle), context, f"the model's context, {context:,}", fontsize=7,
                 va="bottom", color="grey")
    total.set_ylabel("prompt tokens summed over the run")
    largest.set_ylabel("the run's longest prompt (tokens)")
    total.set_title("warehouse: tokens per run", fontsize=9)
    largest.set_title("warehouse: the longest single prompt", fontsize=9)
    total.legend(fontsize=7)
    _save(fig, path)


# ---------------------------------------------------------------- the two parts


def _rows(out: Path) -> list[Row]:
    """The rows a bench left in `out` (none before it ran)."""
    if not (out / "results.jsonl").is_file():
        return []
    results = read_results(out / "results.jsonl")
    for d in results.diagnostics:
        print(f"warning: {d.message}", file=sys.stderr)
    return list(results.rows)


def _publish(rows: Sequence[Row], folder: Path, text: str) -> None:
    """results.jsonl (the rows as the bench wrote them; trace paths are relative to the bench folder) and report.md."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.jsonl").write_text("".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n"
                                                  for r in rows), encoding="utf-8")
    (folder / "report.md").write_text(text, encoding="utf-8")


def complete_tasks(rows: Sequence[Row], modes: Sequence[str]) -> list[Row]:
    """The rows of the tasks every mode ran (a stopped bench leaves its last task part-done: paired tasks only)."""
    ran: dict[str, set[str]] = {}
    for r in rows:
        ran.setdefault(r.cell.task, set()).add(r.cell.mode)
    return [r for r in rows if ran[r.cell.task] >= set(modes)]


def livemath(args: argparse.Namespace) -> None:
    """Run (unless --publish-only) and publish the livemath comparison."""
    out = args.out / "livemath"
    suite, kept, total = LIVEMATH, None, None
    if args.livemath_tasks:
        order = [json.loads(ln)["id"] for ln in LIVEMATH.with_name("tasks.jsonl").read_text().splitlines() if ln]
        chosen = set(order[:args.livemath_tasks])
        suite, kept, total = mirror(LIVEMATH, lambda t: t["id"] in chosen, args.out / "livemath-suite")
    bench = Bench(suite, MODES, args.executor, out, args.model_timeout)
    if not args.publish_only:
        run(bench)
    ran = _rows(out)
    rows = complete_tasks(ran, bench.modes)
    total = total or sum(1 for ln in LIVEMATH.with_name("tasks.jsonl").read_text(encoding="utf-8").splitlines()
                         if ln.strip())
    note = ("Task success is the suite's verifier (answer.txt holds exactly the right letter), never the "
            "model's declared outcome; RFC is judged from the trace's tool calls and the workdir's files "
            "(`[[require]]` in the suite). Intervals are 95% Wilson score intervals over tasks.")
    if kept is not None:
        note += f" **Subset: the first {kept} of the suite's {total} tasks were chosen.**"
    done = len({r.cell.task for r in rows})
    if done < (kept or total):
        note += (f" **Incomplete: the bench was stopped with {done} of the {kept or total} chosen tasks run in "
                 f"every mode; only those {done} are counted ({len(ran) - len(rows)} rows of a task not run in "
                 "every mode are left out of the tables, though results.jsonl keeps them).**")
    text = (f"# livemath on the embedded local model\n\n{provenance([bench.ran()], note)}\n"
            f"## Per mode\n\n{mode_table(rows)}\n## Requirements violated (cells)\n\n{violations(rows)}\n"
            + demoted(to_markdown(build_report(rows), "The bench's report (skillc.bench.report)")))
    _publish(ran, args.docs / "experiments" / "livemath-local", text)
    executors = ", ".join(dict.fromkeys(r.cell.executor for r in rows))
    livemath_chart(rows, f"livemath, {len({r.cell.task for r in rows})} tasks, {executors}",
                   args.docs / "img" / "livemath-local.png", guessing_rate(rows, LIVEMATH))
    print(text)


def warehouse(args: argparse.Namespace) -> None:
    """Run (unless --publish-only) and publish the warehouse token curve."""
    chosen = set(args.warehouse_machine_tasks)
    benches = [
        Bench(WAREHOUSE, ("native",), args.warehouse_executor, args.out / "warehouse-native", args.model_timeout),
        Bench(mirror(WAREHOUSE, lambda t: t["id"] in chosen, args.out / "warehouse-suite")[0],
              ("machine",), args.warehouse_executor, args.out / "warehouse-machine", args.model_timeout)]
    if not args.publish_only:
        for b in benches:
            run(b)
    local = [(r, largest_prompt(r, b.out)) for b in benches for r in _rows(b.out)]
    oracle_file = args.out / "warehouse-oracle.json"
    wanted = {"v": 2, "horizons": args.oracle_horizons, "shelves": args.oracle_shelves}
    saved = json.loads(oracle_file.read_text()) if oracle_file.is_file() else {}
    if {k: saved.get(k) for k in wanted} == wanted:  # deterministic: the same horizons give the same figures
        oracle, context = [OraclePoint(**p) for p in saved["points"]], saved["context"]
    else:
        oracle, context = oracle_curve(args.oracle_horizons, args.oracle_shelves)
        oracle_file.write_text(json.dumps({**wanted, "points": [attrs.asdict(p) for p in oracle],
                                           "context": context}))
    oracle_command = (f"python -c 'from bench.tokens import measure, PromptTokens; "
                      f"measure(T, {args.oracle_shelves}, PromptTokens())'  # T = "
                      + ", ".join(map(str, args.oracle_horizons)))
    head = ["T", "policy", "mode", "run", "prompt tokens per run", "longest prompt", "steps", "outcome", "task success"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in sorted(oracle, key=lambda p: (p.horizon, p.mode)):
        over = f" ({p.calls_over_context} prompts longer than the context)" if p.calls_over_context else ""
        lines.append(f"| {p.horizon} | oracle | {p.mode} | seed {p.horizon} | {p.total_prompt_tokens:,} | "
                     f"{p.largest_prompt_tokens:,}{over} | {p.steps} | success | yes |")
    for r, m in sorted(local, key=lambda x: (x[0].horizon or 0, x[0].cell.mode, x[0].cell.task)):
        lines.append(f"| {r.horizon} | local 270M | {r.cell.mode} | {r.cell.task} | {r.prompt_tokens:,} | {m:,} | "
                     f"{r.steps} | {r.outcome}{' (' + r.error + ')' if r.error else ''} | "
                     f"{'yes' if r.success else 'no'} |")
    note = ("The oracle rows are `bench/tokens.py`'s `measure(T, shelves)`: a perfect policy answering every request "
            "of the real runtime (machine mode) and of the real native agent loop (native mode, `run_baseline`), "
            f"real tools, {args.oracle_shelves} shelves (the suite's fixtures have 8) and the log seeded with T, "
            "every prompt counted with the local model's tokenizer as the local executor sends it. The local rows "
            "are Gemma 3 270M runs of the suite's tasks through `skillc bench`: native mode at every horizon, "
            f"machine mode only on {', '.join(sorted(chosen))} (one or two model calls an event: a T = 50 run "
            "took 7–8 minutes on the 2 shared cores).")
    text = (f"# warehouse: prompt tokens against the horizon\n\n"
            f"{provenance([b.ran() for b in benches] + [oracle_command], note)}\n"
            + "\n".join(lines) + "\n")
    _publish([r for r, _ in local], args.docs / "experiments" / "warehouse-tokens", text)
    warehouse_chart(oracle, local, context, args.docs / "img" / "warehouse-tokens.png")
    print(text)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--executor", default=EXECUTOR, help=f"the livemath executor (default {EXECUTOR})")
    ap.add_argument("--warehouse-executor", default=EXECUTOR, help="the warehouse executor (default the same)")
    ap.add_argument("--model-timeout", type=float, default=60.0, help="seconds one model call may take")
    ap.add_argument("--out", type=Path, default=ROOT / ".skillc" / "experiment", help="the benches' folders")
    ap.add_argument("--docs", type=Path, default=ROOT / "docs", help="where results and charts are published")
    ap.add_argument("--livemath-tasks", type=int, default=0, help="only the suite's first N tasks (0: all)")
    ap.add_argument("--warehouse-machine-tasks", nargs="+", default=["T25-s1", "T25-s2", "T50-s1", "T50-s2"],
                    help="the warehouse tasks run in machine mode on the local model")
    ap.add_argument("--oracle-horizons", type=int, nargs="+", default=[25, 50, 100, 200])
    ap.add_argument("--oracle-shelves", type=int, default=8, help="shelves of the oracle runs (the suite has 8)")
    ap.add_argument("--only", choices=("livemath", "warehouse"))
    ap.add_argument("--publish-only", action="store_true", help="redraw the tables and charts from --out")
    args = ap.parse_args(argv)
    args.out = args.out.absolute()
    if args.only in (None, "livemath"):
        livemath(args)
    if args.only in (None, "warehouse"):
        warehouse(args)


if __name__ == "__main__":
    main()
