"""Packets for a second look at the faithfulness measure's failures, and the table the reviewers' verdicts make.

`make`: for each skill of a half, a folder OUT/ID holding the skill with line numbers (`SKILL.numbered.md`), the
machine built from it (`machine.skm`: the LLM compiler replaying `corpus/llm/`, or with `--offline` the offline
build; `machine.key`, the hash a review is held to) and its failed requirements (`failures.txt`: an id, the
requirement, its anchor lines and the measure's reason; with `--sample N`, N of them drawn with `--seed`). A
reviewer (a helper given only the packet and `corpus/review/PROMPT.md`) writes `verdicts.tsv` beside them: `F<n>`,
one of M/R/Q/X, a sentence.

`collect`: the packets' verdicts as one table (skill, the machine's `machine_key`, failure, requirement, the
measure's reason, verdict, the reviewer's sentence) on standard output, and the count of each verdict on standard
error. `bench/faithfulness.py --reviewed` reads it back.

`blind`: a blind judgement of every requirement, passed or failed, of both builds of a half: one packet a machine
(the LLM compiler's and the offline build's of each skill), named only `P01`, `P02`… in an order drawn with `--seed`,
holding the numbered skill, the machine and all its requirements (`requirements.txt`: an id, the requirement, its
anchor lines; no verdict of the measure). Which build a packet holds is written beside OUT (`OUT.key.tsv`), not in
it. The packets are dealt into `--lanes` lanes (`OUT/lanes.txt`), no lane holding one skill twice; a judge (a helper
given `corpus/review/JUDGE.md` and one lane) writes `answers.tsv` in each packet: `R<n>`, Y/N/X, a sentence.
`collect-blind` prints the answers as one table (skill, build, `machine_key`, requirement's line number, requirement,
answer, sentence).

    python tools/review_packets.py make OUT [--split test] [--offline] [--sample N] [--seed 2029]
    python tools/review_packets.py collect OUT > corpus/review/test-failures.tsv
    python tools/review_packets.py blind OUT [--split test] [--lanes 8] [--seed 11] [--builds llm,offline]
        [--exchanges corpus/llm]
    python tools/review_packets.py collect-blind OUT > corpus/review/test-blind.tsv

After a change of a compiler, `blind … --changed TABLE` packets only the machines TABLE holds no answers for (those
whose text changed), and `collect-blind OUT --into TABLE` prints TABLE with their new answers in place of the old.
"""

from __future__ import annotations

import argparse
import collections
import random
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.faithfulness import split_ids  # noqa: E402 - after the path
from skillc.frontends.markdown import BuildResult, build  # noqa: E402
from skillc.frontends.markdown.faithfulness import Requirement, load, machine_key, score  # noqa: E402
from skillc.runtime.executors.recorded import RecordedExecutor  # noqa: E402

CORPUS = ROOT / "corpus"


def _packet(sid: str, packet: Path, exchange: Path | None) -> tuple[BuildResult, list[Requirement]] | None:
    """Build a skill (replaying `exchange`, or offline without one) into a packet: the machine, the skill with line
    numbers; the build and the skill's requirements, or None (said on stderr) when the build failed."""
    folder = CORPUS / "skills" / sid
    packet.mkdir(parents=True, exist_ok=True)
    result = build(folder, output=packet / "machine.skm",
                   executor=RecordedExecutor(exchange) if exchange is not None else None)
    if result.machine is None or result.text is None:
        print(f"{sid} ({'offline' if exchange is None else exchange.parent.name}): the build failed; no packet",
              file=sys.stderr)
        return None
    (packet / "machine.skm").write_text(result.text, encoding="utf-8")
    lines = (folder / "SKILL.md").read_text(encoding="utf-8").splitlines()
    (packet / "SKILL.numbered.md").write_text("".join(f"{i:>4} | {line}\n" for i, line in enumerate(lines, 1)),
                                              encoding="utf-8")
    return result, load(CORPUS / "requirements" / f"{sid}.req", folder / "SKILL.md")


def _anchored(r: Requirement) -> str:
    return f"(anchored at SKILL.md lines {', '.join(map(str, r.lines))})"


def _answers(path: Path) -> dict[str, tuple[str, str]]:
    """A reviewer's or judge's lines (`ID<TAB>ANSWER<TAB>sentence`), by id; none where the file is missing."""
    out = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            rid, answer, why = (line.split("\t", 2) + ["", ""])[:3]
            out[rid.strip()] = (answer.strip(), why.strip())
    return out


def make(out: Path, split: str, offline: bool, sample: int | None, seed: int) -> int:
    """Write one packet a skill; the number of failures in them."""
    rng = random.Random(seed)
    total = 0
    for sid in split_ids(CORPUS, split):
        packet = out / sid
        built = _packet(sid, packet, None if offline else CORPUS / "llm" / f"{sid}.exchange.jsonl")
        if built is None:
            continue
        result, requirements = built
        assert result.machine is not None and result.text is not None  # _packet said so
        (packet / "machine.key").write_text(machine_key(result.text) + "\n", encoding="utf-8")
        failed = [v for v in score(result.machine, requirements).verdicts if not v.ok]
        if sample is not None:
            failed = rng.sample(failed, min(sample, len(failed)))
        (packet / "failures.txt").write_text("".join(
            f"F{k}\t{v.requirement.text}\t{_anchored(v.requirement)}\tmeasure says: {v.why}\n"
            for k, v in enumerate(failed, 1)), encoding="utf-8")
        total += len(failed)
    return total


def _judged_keys(table: Path | None) -> set[tuple[str, str, str]]:
    """(skill, build, machine) of every machine a blind table holds answers for; none without a table."""
    if table is None:
        return set()
    rows = [line.split("\t") for line in table.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]
    return {(row[0], row[1], row[2]) for row in rows}


def blind(out: Path, split: str, lanes: int, seed: int, builds: tuple[str, ...] = ("llm", "offline"),
          exchanges: Path = CORPUS / "llm", changed: Path | None = None) -> int:
    """Write one anonymous packet a machine (each build of each skill; `llm` replays `exchanges`; with `changed`,
    only the machines that table holds no answers for) and deal them into lanes; the packets."""
    judged = _judged_keys(changed)
    rng = random.Random(seed)
    machines = [(sid, kind) for sid in split_ids(CORPUS, split) for kind in builds]
    rng.shuffle(machines)
    key = ["packet\tskill\tbuild\tmachine"]
    dealt: list[list[tuple[str, str, int]]] = [[] for _ in range(lanes)]  # per lane: (packet, skill, requirements)
    for k, (sid, kind) in enumerate(machines, 1):
        packet = out / f"P{k:02d}"
        built = _packet(sid, packet, exchanges / f"{sid}.exchange.jsonl" if kind == "llm" else None)
        if built is None:
            continue
        result, requirements = built
        assert result.text is not None  # _packet said so
        if (sid, kind, machine_key(result.text)) in judged:  # judged already, as it is
            shutil.rmtree(packet)
            continue
        (packet / "requirements.txt").write_text("".join(
            f"R{n}\t{r.text}\t{_anchored(r)}\n" for n, r in enumerate(requirements, 1)), encoding="utf-8")
        key.append(f"{packet.name}\t{sid}\t{kind}\t{machine_key(result.text)}")
        # The lightest lane without this skill: the lanes even out, and no judge sees one skill twice.
        lane = min((x for x in dealt if all(s != sid for _, s, _ in x)), key=lambda x: sum(n for _, _, n in x))
        lane.append((packet.name, sid, len(requirements)))
    out.with_name(out.name + ".key.tsv").write_text("\n".join(key) + "\n", encoding="utf-8")
    (out / "lanes.txt").write_text("".join(f"lane {k}: " + " ".join(str(out / name) for name, _, _ in lane) + "\n"
                                           for k, lane in enumerate(dealt, 1)), encoding="utf-8")
    return len(key) - 1


def collect_blind(out: Path, into: Path | None = None) -> collections.Counter[str]:
    """Print the judges' answers as one table (the key beside OUT says which build each packet holds); with `into`,
    that table with the machines judged here in place of its rows of the same skill and build."""
    counts: collections.Counter[str] = collections.Counter()
    rows = out.with_name(out.name + ".key.tsv").read_text(encoding="utf-8").splitlines()[1:]
    key = {row[0]: row[1:] for row in (line.split("\t") for line in rows)}
    judged: dict[tuple[str, str], list[str]] = {}
    for packet in sorted(p for p in out.iterdir() if (p / "requirements.txt").is_file()):
        sid, kind, machine = key[packet.name]
        answers = _answers(packet / "answers.tsv")
        requirements = load(CORPUS / "requirements" / f"{sid}.req", CORPUS / "skills" / sid / "SKILL.md")
        for n, r in enumerate(requirements, 1):
            answer, why = answers.get(f"R{n}", ("-", "no answer"))
            counts[f"{kind} {answer}"] += 1
            judged.setdefault((sid, kind), []).append("\t".join((sid, kind, machine, str(r.line), r.text, answer, why)))
    print("skill\tbuild\tmachine\trequirement_line\trequirement\tanswer\tjudge")
    printed: set[tuple[str, str]] = set()
    for line in into.read_text(encoding="utf-8").splitlines()[1:] if into is not None else []:
        sid, kind = line.split("\t")[:2]
        if (sid, kind) not in judged:
            print(line)
        elif (sid, kind) not in printed:  # the machine judged here, where the old one's rows stood
            print("\n".join(judged[sid, kind]))
            printed.add((sid, kind))
    for k, lines in judged.items():
        if k not in printed:
            print("\n".join(lines))
    return counts


def collect(out: Path) -> collections.Counter[str]:
    """Print the packets' verdicts as one table; the count of each verdict."""
    counts: collections.Counter[str] = collections.Counter()
    print("skill\tmachine\tfailure\trequirement\tmeasure\tverdict\treviewer")
    for packet in sorted(p for p in out.iterdir() if (p / "failures.txt").is_file()):
        key = (packet / "machine.key").read_text(encoding="utf-8").strip()
        verdicts = {}
        if (packet / "verdicts.tsv").is_file():
            for line in (packet / "verdicts.tsv").read_text(encoding="utf-8").splitlines():
                fid, verdict, why = (line.split("\t", 2) + ["", ""])[:3]
                verdicts[fid] = (verdict.strip(), why.strip())
        for line in (packet / "failures.txt").read_text(encoding="utf-8").splitlines():
            fid, requirement, _, measure = line.split("\t")
            verdict, why = verdicts.get(fid, ("-", "no verdict"))
            counts[verdict] += 1
            print("\t".join((packet.name, key, fid, requirement, measure.removeprefix("measure says: "), verdict, why)))
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make", help="write the packets")
    m.add_argument("out", type=Path)
    m.add_argument("--split", default="test", choices=("dev", "test"))
    m.add_argument("--offline", action="store_true", help="the offline build's machines and failures")
    m.add_argument("--sample", type=int, default=None, help="at most N failures a skill, drawn with --seed")
    m.add_argument("--seed", type=int, default=2029)
    c = sub.add_parser("collect", help="print the verdicts as one table")
    c.add_argument("out", type=Path)
    b = sub.add_parser("blind", help="write anonymous packets of every requirement, both builds, dealt into lanes")
    b.add_argument("out", type=Path)
    b.add_argument("--split", default="test", choices=("dev", "test"))
    b.add_argument("--lanes", type=int, default=8)
    b.add_argument("--seed", type=int, default=11)
    b.add_argument("--builds", default="llm,offline", help="which builds, comma-separated (llm, offline)")
    b.add_argument("--exchanges", type=Path, default=CORPUS / "llm", help="the llm build replays these exchanges")
    b.add_argument("--changed", type=Path, default=None,
                   help="a blind table: packet only the machines it holds no answers for")
    cb = sub.add_parser("collect-blind", help="print the judges' answers as one table")
    cb.add_argument("out", type=Path)
    cb.add_argument("--into", type=Path, default=None,
                    help="a blind table: print it with the machines judged here in place of its rows of them")
    args = parser.parse_args(argv)
    if args.command == "make":
        print(f"{make(args.out, args.split, args.offline, args.sample, args.seed)} failures", file=sys.stderr)
    elif args.command == "blind":
        builds = tuple(b for b in args.builds.split(",") if b)
        print(f"{blind(args.out, args.split, args.lanes, args.seed, builds, args.exchanges, args.changed)} packets",
              file=sys.stderr)
    else:
        counts = collect(args.out) if args.command == "collect" else collect_blind(args.out, args.into)
        print(" ".join(f"{k} {n}" for k, n in sorted(counts.items())), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
