"""The language card: the whole `.skm` language, as the LLM compiler's request carries it.

The card is assembled, never written by hand, so it cannot drift from the language:

- **syntax** — every rule of `grammar/skm.lark` (comments kept, aliases dropped);
- **semantics** — sections of `docs/language.md`, by heading (a renamed heading is left out and listed by
  `problems()`, which the tests require to be empty), examples included, with the tool kit's table replaced by one generated from
  `skillc.ir.toolkit` (`KIT_SOURCE`, `HARNESS_NAMES`, `PLACES`, `WORLD_FUNCTIONS`);
- **built-in functions** from `skillc.ir.exprs.FUNCTIONS`, each with its row of the reference's table;
- **rules** — what each kind proves and what it cannot (one entry per `rule_*` of the grammar);
- **the standard library** — each fragment of `stdlib/` with its header comment, signature and tools;
- **conventions** for compiling a skill folder (user questions, scripts, references, commands, evidence);
- **a worked example** — a small skill folder and its machine, which the tests check with `skillc check`.

`card()` is deterministic: the same sources give the same text, byte for byte. `card("brief")` leaves the
reference sections out, for executors with a small context (the local model).
"""  # noqa: E501 - docstring text kept verbatim

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Final, Literal

from skillc.ir.exprs import FUNCTIONS
from skillc.ir.toolkit import HARNESS_NAMES, KIT_SOURCE, PLACES, WORLD_FUNCTIONS
from skillc.ir.types import show
from skillc.syntax.grammar import grammar_text, stdlib_path

_HERE = Path(__file__).resolve().parent.parent.parent  # the installed package `skillc`


class CardError(RuntimeError):
    """The sources of the card are missing or lack what it needs (`problems()` lists what)."""


def language_path() -> Path:
    """`docs/language.md`: the packaged copy in a wheel, the repository's `docs/` in a checkout."""
    for candidate in (_HERE / "_data" / "docs" / "language.md", _HERE.parent / "docs" / "language.md"):
        if candidate.is_file():
            return candidate
    raise CardError("docs/language.md is missing from this installation of skillc")


# ---------------------------------------------------------------- syntax

def syntax() -> str:
    """The grammar's rules and terminals, as Lark EBNF: comments kept, banners, aliases and directives dropped."""
    out: list[str] = []
    for line in grammar_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("//") and (not out or set(stripped[2:].strip()) <= {"-"} or "---" in stripped):
            continue  # the file's header and the section banners
        if stripped.startswith("%"):
            continue  # %import / %ignore: whitespace and comments are free
        line = re.sub(r"\s+->\s+[a-z_]+\s*$", "", line.rstrip())  # `-> alias` names tree nodes, not syntax
        line = re.sub(r"^\?(?=[a-z_]+:)", "", line)  # `?rule` only shapes the parse tree
        if not line.strip() and (not out or not out[-1].strip()):
            continue
        out.append(line)
    return "\n".join(out).strip() + "\n\nWhitespace and `# comments` may appear between any two tokens."


def grammar_constructs() -> tuple[set[str], set[str]]:
    """The grammar's rule names and its keywords (quoted words), for the tests that hold the card to it."""
    text = grammar_text()
    rules = set(re.findall(r"(?m)^[?!]?([a-z_][a-z0-9_]*)\s*:", text))
    keywords = set(re.findall(r'"([a-z_]+)"', text))
    return rules, keywords


# ---------------------------------------------------------------- the reference's sections

#: The sections of docs/language.md the card carries, by heading number and title (as the reference writes them).
SECTIONS: Final[tuple[str, ...]] = (
    "### 2.1 String literals",
    "## 3. File structure",
    "## 4. The tool interface table",
    "### 4.1 The agent tool kit: `use tools`",
    "### 4.2 Capabilities: `allow`",
    "## 5. Types",
    "## 6. Variables",
    "### 6.1 Places",
    "## 7. States",
    "### 7.1 `model`",
    "### 7.2 `judge`",
    "### 7.3 `tool`",
    "## 8. Edges",
    "### 8.1 Assignments",
    "### 8.2 Counters and bounded loops",
    "## 9. Expressions",
    "## 10. Terminals and the fallback",
    "## 11. Rules",
    "## 12. Fragments",
    "## 13. Imports",
    "## 14. How a machine runs",
    "## 15. What a well-formed machine guarantees",
)

_HEADING = re.compile(r"(?m)^(#{2,3}) (.+)$")


def _sections(text: str) -> dict[str, str]:
    """Each `##`/`###` heading of the reference with its body (up to the next such heading)."""
    found = list(_HEADING.finditer(text))
    return {m.group(0).strip(): text[m.end():found[i + 1].start() if i + 1 < len(found) else len(text)]
            for i, m in enumerate(found)}


def _table_rows(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.startswith("|")]


def kit_table() -> str:
    """The agent tool kit, from `skillc.ir.toolkit`: each tool's signature and its harness spellings."""
    spellings: dict[str, list[str]] = {}
    for harness, tool in HARNESS_NAMES.items():
        spellings.setdefault(tool, []).append(harness)
    rows = ["| tool | signature | allowed-tools spellings (any case) |", "|---|---|---|"]
    for name, source in KIT_SOURCE.items():
        rows.append(f"| `{name}` | `{source.removeprefix('tool ')}` | {', '.join(sorted(spellings.get(name, [])))} |")
    places = ", ".join(f"`{p}`" for p in PLACES)
    world = ", ".join(f"`{name}({', '.join(show(t) for t in params)}) -> {show(result)}`"
                      for name, (params, result) in WORLD_FUNCTIONS.items())
    return ("\n".join(rows) + f"\n\nPlaces (predeclared read-only `str` values): {places}. "
            f"World predicates (only in a terminal's `requires`): {world}.")


def problems(text: str | None = None) -> list[str]:
    """What the card's sources lack: sections of SECTIONS, rows of built-ins (the tests require none)."""
    text = language_path().read_text(encoding="utf-8") if text is None else text
    sections = _sections(text)
    rows = _table_rows(text)
    out = [f"docs/language.md has no section `{h}`; update card.SECTIONS" for h in SECTIONS if h not in sections]
    out += [f"the built-in `{name}` has no row in the tables of docs/language.md"
            for name in (*FUNCTIONS, *WORLD_FUNCTIONS) if not any(r.startswith(f"| `{name}(") for r in rows)]
    return out


def _semantics(text: str, strict: bool = False) -> str:
    """The reference's sections; a missing one is skipped (or, `strict`, a CardError)."""
    sections = _sections(text)
    out: list[str] = []
    for heading in SECTIONS:
        if heading not in sections:
            if strict:
                raise CardError(f"docs/language.md has no section `{heading}`; update card.SECTIONS")
            continue
        body = sections[heading].strip()
        rows = _table_rows(body)
        if heading.startswith("### 4.1") and rows:  # the kit's table comes from the tool kit itself
            first = body.index(rows[0])
            last = body.index(rows[-1]) + len(rows[-1])
            body = body[:first] + kit_table() + body[last:]
        body = re.sub(r"\n{3,}", "\n\n", body)
        out.append(f"#{heading}\n\n{body}")  # one level down: they sit under the card's own heading
    return "\n\n".join(out)


def builtins(text: str) -> str:
    """The built-in functions, each with the reference's row (an undocumented one by its name only)."""
    rows = _table_rows(text)
    out = ["| call | argument types | result |", "|---|---|---|"]
    for name in (*FUNCTIONS, *WORLD_FUNCTIONS):
        out.append(next((r for r in rows if r.startswith(f"| `{name}(")), f"| `{name}(…)` | | |"))
    return ("\n".join(out) + "\n\nAnything else is not a function: `+` does not join strings (use `++`), and "
            f"`{'`, `'.join(WORLD_FUNCTIONS)}` stand only in a terminal's `requires`.")


# ---------------------------------------------------------------- rules, stdlib, conventions

#: What each rule kind proves on the graph, and what it cannot; one entry per `rule_*` of the grammar.
RULE_KINDS: Final[dict[str, tuple[str, str, str]]] = {
    "required": ("rule required OP \"…\"", "every run that ends in success passes a state of OP",
                 "that OP did its work well; a step every path already starts with proves nothing"),
    "order": ("rule order A before B \"…\"", "B is unreachable once A's states are removed",
              "that A succeeded or that B used A's result (that is `reads`)"),
    "forbid": ("rule forbid OP \"…\"", "no reachable state performs OP (a state, or a tool no state calls)",
               "anything about content: \"never include secrets\", \"do not guess\" go into the prompts of the states "
               "they concern. Forbid only an operation the machine really has (a kit tool it took, e.g. `write`, "
               "`bash`); never declare a tool just to forbid it"),
    "ends": ("rule ends OP in OUTCOME \"…\"", "every terminal reachable from OP's states has that outcome (stop "
             "clauses: \"if the upload fails, stop\")", "why the run stopped; put the arm's state (not the common "
             "path) as OP"),
    "reads": ("rule reads B from A \"…\"", "every definition of a variable B reads that reaches B was written by A",
              "that B used it well. With a revise loop, keep A the only writer: route the critique through a "
              "separate variable (`feedback: str = \"\"`) back to A instead of letting the reviser overwrite A's "
              "output"),
}


def rules_table() -> str:
    rows = ["| rule | proves on the graph | cannot prove |", "|---|---|---|"]
    rows += [f"| `{form}` | {proves} | {cannot} |" for form, proves, cannot in RULE_KINDS.values()]
    return ("\n".join(rows) + "\n\nEvery rule quotes the sentence of SKILL.md it encodes, verbatim (the build drops "
            "a rule whose quotation is not in the document). A requirement that no rule can prove stays in the "
            "prompt of the state it concerns.")


def stdlib() -> str:
    """Each fragment of the bundled library: its header comment, signature and the tools it needs."""
    out = []
    for path in sorted(stdlib_path().glob("*.skm")):
        lines = path.read_text(encoding="utf-8").splitlines()
        header = [x[1:].strip() for x in lines if x.startswith("#")]
        head = next((x.strip().rstrip("{").strip() for x in lines if x.startswith("fragment ")), None)
        if head is None:
            continue
        tools = [x.strip() for x in lines if x.strip().startswith("tool ") and "(" in x]
        usage = [x for x in header if x.startswith(("import", "use"))]
        about = " ".join(x for x in header if x and x not in usage)
        out.append(f"- `{head}` (`import \"stdlib/{path.name}\"`): {about}"
                   + (f" Needs `{'`, `'.join(tools)}`." if tools else "")
                   + (f" Use: `{usage[-1]}`" if usage else ""))
    return "\n".join(out) + ("\n\nA fragment's `tool bash(command: str) -> (stdout: str, exit_code: int)` fits a "
                             "machine that took the kit's `bash` (`use tools std`).")


OUTCOMES: Final = """A terminal's outcome is `success` (the skill's deliverable exists), `partial` (the run stopped \
with something usable but unfinished: unverified, not approved, out of rounds) or `failed` (a failure the skill \
describes). `fallback` (outcome failed) is where the runtime sends failed operations; name the skill's own \
failures with terminals of their own."""

CONVENTIONS: Final = """- **The compile unit is the folder.** The front matter's `allowed-tools` becomes `allow` with \
the same entries, in the same spelling; take the kit tools you call with `use tools std(…)` (only those). \
Loading the skill's own references with `read` needs `"Read"` in `allow`; `"Read"`, `"Glob"`, `"Grep"` and \
`"AskUserQuestion"` may always be added, since they never widen what the skill allows. A skill's `$ARGUMENTS` (or \
`argument-hint`) is an `input`; so is anything else the run is given.
- **Steps are states; knowledge is not.** Every action the skill tells the agent to do is a state, in the \
skill's order. Tables, catalogues, tips and examples go into the prompt (or `doc`) of the state that needs \
them. Give each state `from "SKILL.md":A-B` with the lines it came from.
- **model** states produce text or values; **judge** states pick one label; **tool** states act. A model state \
never runs, writes, saves, creates, fetches or asks: it produces the value (the content, the name, the \
command's argument) and a tool state does the act with it.
- **Only the user answers for the user.** "Ask the user", "confirm with the user", "wait for the user's \
choice", "let the user pick" is a tool state calling `ask_user(question: …, options: […])` that writes \
the answer; a judge or a guard routes on it. `ask_user` is the only way a machine gets the user's answer: \
a model state must never be told to wait for the user or to assume what they said.
- **Commands.** Each `bash` call is a fresh shell: no shell variable, `cd` or `export` carries over to the \
next tool state; carry values in machine variables. A command never holds a placeholder (`<branch>`, \
`{name}`, `$ARGUMENTS`): bind the value to an input or to a state's output and splice it in with \
`quote(…)`. Keep what a command says: `writes out = stdout, err = stderr, status = exit_code`, and route on \
`status`. Commands the skill shows as examples, illustrations or sample output are knowledge, not steps.
- **Bundled scripts** are tools run from the skill's folder, with the run's work folder as the current \
folder: `call bash(command: "python3 " ++ quote(skill_dir ++ "/scripts/x.py") ++ " --pr " ++ \
quote(pr))`. Their usage is listed with the folder; pass only the options it documents.
- **References are loaded where they are needed**, deterministically: a tool state \
`call read(path: skill_dir ++ "/references/x.md")` writes a variable that only the states needing it \
read (their prompts say what to take from it). No other state sees it.
- **Success is an effect.** A `success` terminal requires evidence a tool state produced on every path \
(its result, `status == 0`) or a world predicate (`exists("out.md")`, `file("answer.txt") == str(x)`); \
model text alone proves no deliverable.
- **Loops are counted.** A revise or retry loop increments a counter on its back edge, guarded by \
`counter < max`. A counter that must restart for each round of an outer loop is reset on the outer loop's \
edge (`inner = 0`), and the outer loop has a counter of its own.
- **Every sentence lands.** Each sentence of SKILL.md ends up in a state's prompt or doc, a state's `from` \
range, or a rule's quotation; no output is produced that nothing reads or requires."""


# ---------------------------------------------------------------- the worked example

EXAMPLE_SKILL: Final = """---
name: release-notes
description: Draft release notes for the changes since a tag and save them once the user approves.
allowed-tools: Read, Write(NOTES.md), Bash(python3:*), AskUserQuestion
---

# Release notes

1. Collect the changes with `python3 scripts/changes.py --since <tag>`, where `<tag>` is the last release tag.
   If the script fails, stop and report that the history could not be read.
2. Draft the notes in the house style (see references/style.md).
3. Ask the user to approve the notes. If they ask for changes, revise the draft (at most twice).
4. Save the approved notes to NOTES.md.

Never save the notes before the user has approved them.
"""

EXAMPLE_FOLDER: Final = """- SKILL.md
- scripts/changes.py: usage: changes.py --since TAG (prints one line per change since TAG)
- references/style.md: "House style for release notes\""""

EXAMPLE_MACHINE: Final = '''machine release_notes {
  doc "Draft release notes for the changes since a tag; save them once the user approves."
  source "SKILL.md"
  use tools std(read, write, bash, ask_user)
  allow "Read", "Write(NOTES.md)", "Bash(python3:*)", "AskUserQuestion"

  input since: str
  var changes: str
  var collect_error: str
  var collect_status: int
  var failure: str
  var style: str
  var notes: str
  var feedback: str = ""
  var answer: str
  var approval: enum { approved, changes_requested }
  var saved: str
  counter revisions max 2

  start collect

  tool collect {
    from "SKILL.md":9
    doc "The bundled script, run from the skill's folder; the work folder stays the current folder."
    reads since
    call bash(command: "python3 " ++ quote(skill_dir ++ "/scripts/changes.py") ++ " --since " ++ quote(since))
    writes changes = stdout, collect_error = stderr, collect_status = exit_code
    when collect_status != 0 -> report_failure
    -> load_style
  }

  model report_failure {
    from "SKILL.md":10
    reads collect_error
    writes failure
    prompt "The history could not be read. Explain the error in `collect_error` in one sentence."
    -> no_history
  }

  tool load_style {
    from "SKILL.md":11
    doc "references/style.md, for `draft` only."
    call read(path: skill_dir ++ "/references/style.md")
    writes style = content
    -> draft
  }

  model draft {
    from "SKILL.md":11
    reads changes, style, feedback
    writes notes
    prompt """
      Draft release notes for `changes` in the house style described in `style`.
      When `feedback` is not empty, revise the notes to address it.
      Reply with the notes only.
      """
    -> ask
  }

  tool ask {
    from "SKILL.md":12
    reads notes
    call ask_user(question: "Approve these release notes, or say what to change:\\n\\n" ++ notes)
    writes answer
    -> decide
  }

  judge decide {
    from "SKILL.md":12
    reads answer
    writes approval
    prompt "Answer `approved` when the user approved the notes as they are, `changes_requested` otherwise."
    when approval == approved -> save
    when revisions < 2 -> draft { revisions += 1, feedback = answer }
    -> not_approved
  }

  tool save {
    from "SKILL.md":13
    reads notes
    call write(path: "NOTES.md", content: notes)
    writes saved = sha256
    -> published
  }

  terminal published: success { requires saved, exists("NOTES.md") }
  terminal not_approved: partial { requires notes, answer }
  terminal no_history: failed { requires failure }
  fallback

  rule order ask before save "Never save the notes before the user has approved them." from "SKILL.md":15
  rule required save "Save the approved notes to NOTES.md." from "SKILL.md":13
  rule reads save from draft "Save the approved notes to NOTES.md." from "SKILL.md":13
  rule ends report_failure in failed "If the script fails, stop and report that the history could not be read." from "SKILL.md":10
}
'''  # noqa: E501 - a verbatim example program


def example() -> str:
    return (f"A skill folder:\n\n{EXAMPLE_FOLDER}\n\nSKILL.md (line numbers on the left):\n\n"
            + "\n".join(f"{i:>3} | {line}" for i, line in enumerate(EXAMPLE_SKILL.splitlines(), 1))
            + f"\n\nIts machine (it passes `skillc check`):\n\n```skm\n{EXAMPLE_MACHINE}```\n\n"
              "`collect` runs the bundled script with the tag bound to an input; `style` is read for `draft` only; "
              "the user's answer comes from `ask_user` and a judge routes on it; the revise loop sends the answer "
              "back as `feedback` (so `draft` stays the only writer of `notes` and `rule reads` holds) and is paid "
              "for by `revisions`; success requires what the `write` tool produced and a world predicate.")


# ---------------------------------------------------------------- the card

Level = Literal["full", "brief"]


@functools.cache
def card(level: Level = "full") -> str:
    """The language card: syntax, semantics, tool kit, built-ins, rules, stdlib, conventions, an example."""
    reference = language_path().read_text(encoding="utf-8")
    parts = ["# The .skm language",
             "## Syntax (grammar/skm.lark, Lark EBNF: quoted words are keywords, `[x]` and `x?` optional, "
             "`x*` repeated, a rule whose name starts with `_` is inlined)\n\n"
             f"```lark\n{syntax()}\n```"]
    if level == "full":
        parts.append(f"## Reference (docs/language.md)\n\n{_semantics(reference)}")
    else:
        parts.append(f"## The agent tool kit (`use tools std`)\n\n{kit_table()}")
    parts += [f"## Built-in functions\n\n{builtins(reference)}",
              f"## Rules: what each proves, and what it cannot\n\n{rules_table()}",
              f"## Outcomes\n\n{OUTCOMES}",
              f"## Fragments of the standard library (`import \"stdlib/NAME.skm\"`, then `use`)\n\n{stdlib()}",
              f"## Compiling a skill folder\n\n{CONVENTIONS}",
              f"## Worked example\n\n{example()}"]
    return "\n\n".join(parts) + "\n"


__all__ = [
    "EXAMPLE_MACHINE",
    "EXAMPLE_SKILL",
    "RULE_KINDS",
    "CardError",
    "card",
    "grammar_constructs",
    "problems",
    "syntax",
]
