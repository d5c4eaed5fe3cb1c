"""Where each clause of the document landed in a machine, and the coverage figure.

Coverage is measured on the finished machine, not taken from the compiler's
intentions: a clause is covered when a rule quotes it, when a state's or
terminal's `from` range holds it, or when its text occurs in the local
instructions (prompt or doc) of a state. The same measure serves the
structural and the LLM compiler.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from skillc.check.provenance import normalise
from skillc.frontends.markdown.clauses import Clause
from skillc.syntax import nodes as n


@attrs.frozen
class Row:
    """One clause and where it landed ('' when nowhere)."""

    clause: Clause
    landed: str

    @property
    def covered(self) -> bool:
        return bool(self.landed)


def _prov(items: Iterable[n.Stmt]) -> tuple[int, int] | None:
    """The line range of a block's `from`, if it has one."""
    for it in items:
        if isinstance(it, n.From):
            return it.where.start, it.where.end or it.where.start
    return None


def landings(module: n.Module, clauses: list[Clause]) -> list[Row]:
    """Each clause with the machine element that carries it."""
    machine = next((m for m in module.items if isinstance(m, n.Machine)), None)
    if machine is None:
        return [Row(c, "") for c in clauses]
    states, texts, rules = [], [], []
    covering: dict[int, list[str]] = {}  # line -> states whose `from` range holds it
    lines: dict[str, str] = {}  # each normalised instruction line -> its state, for the common exact case
    for item in machine.items:
        if isinstance(item, (n.State, n.Terminal, n.Fallback)):
            name = getattr(item, "name", "fallback")
            p = _prov(item.items)
            states.append((name, p))
            for line in range(p[0], p[1] + 1) if p else ():
                covering.setdefault(line, []).append(name)
            raw = "\n".join(x.text for x in item.items if isinstance(x, (n.Prompt, n.Doc)))
            for said in raw.split("\n"):
                lines.setdefault(normalise(said), name)
            texts.append((name, normalise(raw)))
        elif isinstance(item, n.Rule):
            rules.append((f"rule {item.kind} {' before '.join(item.ops)}", normalise(item.quote)))
    ranges = dict(states)
    by_quote = {quote: r for r, quote in reversed(rules)}
    rows = []
    for c in clauses:
        want = normalise(c.text)
        landed = by_quote.get(want) or next((r for r, quote in rules if want and want in quote), "")
        if not landed:
            holding = [name for name in covering.get(c.start, ()) if ranges[name][1] >= c.end]
            inside = [name for line in range(c.start, c.end + 1) for name in covering.get(line, ())
                      if ranges[name][0] == line and ranges[name][1] <= c.end]
            if holding:  # the most specific state: the one whose range starts last (the first of those)
                landed = f"state {max(holding, key=lambda name: ranges[name][0])}"
            elif inside:
                landed = "states " + ", ".join(inside[:4]) + (" …" if len(inside) > 4 else "")
        if not landed and want:
            hit = lines.get(want) or next((name for name, body in texts if want in body), None)
            if hit is not None:
                landed = f"instruction in {hit}"
        rows.append(Row(c, landed))
    return rows


def coverage(rows: list[Row]) -> float:
    """Share of clauses that landed somewhere (1.0 for a document without clauses)."""
    return sum(r.covered for r in rows) / len(rows) if rows else 1.0


@attrs.frozen
class RuleReport:
    """The control requirements a build extracted as rules: proved by the checker, or dropped as unproven."""

    proved: tuple[str, ...] = ()  # `rule order a before b`, … of the written machine (the checker proved each)
    unproved: tuple[str, ...] = ()  # rules the draft had that did not hold, with the checker's reason
    prohibitions: tuple[tuple[str, str], ...] = ()  # (sentence, where it landed): constraints, not rules
    bash_added: bool = False
    unencoded: tuple[str, ...] = ()  # constructs the offline compiler could not encode (SKM320), with their lines

    @property
    def share(self) -> float:
        """Proved rules over extracted rules (1.0 when none were extracted)."""
        total = len(self.proved) + len(self.unproved)
        return len(self.proved) / total if total else 1.0

    def render(self) -> str:
        """The faithfulness lines of `skillc build --report`: what was proved, and what was not.

        Each line says exactly what it counts: requirements the build extracted as rules and the
        checker proved on the written machine; those it could not prove (instructions only);
        prohibitions (prompt constraints, never proved); constructs it could not encode (runs
        through them end `review_required`); and that control it did not extract is not measured.
        """
        out = []
        total = len(self.proved) + len(self.unproved)
        if total:
            out.append(f"requirements: {total} extracted as rules; {len(self.proved)}/{total} proved by the checker "
                       f"on this machine ({100 * self.share:.1f}%)" +
                       (f", {len(self.unproved)} not proved (kept as instructions only)" if self.unproved else ""))
        else:
            out.append("requirements: none extracted as rules (nothing proved)")
        out += [f"  proved      {r}" for r in self.proved]
        out += [f"  not proved  {r}" for r in self.unproved]
        if self.prohibitions:
            out.append(f"prohibitions: {len(self.prohibitions)} kept as constraints in prompts (instructions to the "
                       "model, no operation to forbid; not proved)")
            out += [f"  {' '.join(q.split())[:70]}  -> {w or '(nowhere)'}" for q, w in self.prohibitions]
        if self.unencoded:
            out.append(f"not encoded: {len(self.unencoded)} construct(s) the offline compiler could not encode "
                       "(SKM320); every run through them ends `review_required` (partial), never success")
            out += [f"  {u}" for u in self.unencoded]
        out.append("not measured: the order, branches and loops the build did not extract as rules are drafted from "
                   "the text but not proved against it (bench/faithfulness.py scores a build against a requirements "
                   "file)")
        if self.bash_added:
            out.append("commands: `bash` declared because the skill has commands to run (SKM315)")
        return "\n".join(out)


def table(rows: list[Row], width: int = 60, rules: RuleReport | None = None) -> str:
    """The clause table printed by `skillc build --report`."""
    out = [f"{'lines':>7}  {'class':<9}  {'clause':<{width}}  landed in", "-" * (width + 40)]
    for r in rows:
        text = " ".join(r.clause.text.split())
        text = text if len(text) <= width else text[: width - 1] + "…"
        out.append(f"{r.clause.lines:>7}  {r.clause.kind:<9}  {text:<{width}}  {r.landed or '(nowhere)'}")
    covered = sum(r.covered for r in rows)
    out.append("-" * (width + 40))
    out.append(f"coverage: {covered}/{len(rows)} clauses ({100 * coverage(rows):.1f}%) landed in a rule, a state's "
               "lines or a prompt (where each sentence went, not proof that its control is encoded)")
    if rules is not None:
        out.append(rules.render())
    return "\n".join(out)
