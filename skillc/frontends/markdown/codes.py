"""Diagnostic codes of the markdown front end (SKM3xx), registered with the shared registry.

The examples are markdown documents, so they are not run by the registry
test; `tests/frontends/test_codes.py` builds each one and asserts its code.
"""

from __future__ import annotations

from skillc.diagnostics.codes import Code, register
from skillc.diagnostics.diagnostic import Severity

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE

_SKILL = "# Answer a question\n\n1. Read the question.\n2. Write the answer to answer.txt.\n"

CODES = [
    Code("SKM300", "empty-skill", E, "the skill document is empty",
         "There is nothing to compile: the file holds only whitespace (or only front matter).",
         "", _SKILL, "write the procedure in the skill document first", runnable=False, lang="markdown"),
    Code("SKM301", "binary-skill", E, "the skill document is not UTF-8 text",
         "skillc reads skills as UTF-8 markdown. A file with NUL or other control bytes, or bytes that are "
         "not UTF-8, is refused before anything is built.",
         "", _SKILL, "pass the markdown file of the skill, saved as UTF-8", runnable=False, lang="markdown"),
    Code("SKM302", "skill-too-large", E, "the skill document is larger than the limit",
         "Skill documents are limited to 1 MiB by default, far beyond any real skill. A larger file is "
         "usually not a skill (a log, a data dump); `--max-bytes` raises the limit.",
         "", _SKILL, "split the document, or raise the limit with --max-bytes", runnable=False, lang="markdown"),
    Code("SKM303", "bad-front-matter", E, "the YAML front matter is broken",
         "A skill may start with a YAML header between `---` lines (name, description, allowed-tools). "
         "A header that is never closed, is not valid YAML, is not a mapping, or gives a field the wrong "
         "type is refused, with the line of the problem.",
         "---\nname: [unclosed\n---\n# Skill\n\n1. Do it.\n",
         "---\nname: answer\nallowed-tools: Bash\n---\n# Skill\n\n1. Do it.\n",
         "fix the YAML between the `---` lines", runnable=False, lang="markdown"),
    Code("SKM304", "no-procedure", W, "the skill has no procedure",
         "No numbered steps, step headings, procedure section, checklist, decision tree or imperative "
         "sentence was found: the document is pure knowledge. It still compiles, to one model state whose "
         "instructions hold the whole document.",
         "# Style guide\n\nOur documentation speaks to the reader in the second person.\n",
         _SKILL, "number the steps, or add a `## Procedure` section", runnable=False, lang="markdown"),
    Code("SKM305", "uncovered-clause", W, "a clause of the skill landed nowhere in the machine",
         "Every clause of the document should become a state, a rule, or part of a state's local "
         "instructions. A clause that is in none of them is knowledge the machine has lost.",
         "", _SKILL, "add it to a state's prompt, or make it a rule", runnable=False, lang="markdown"),
    Code("SKM306", "unknown-allowed-tool", N, "an allowed tool has no skillc interface",
         "The front matter names a tool skillc cannot declare by itself (only `Bash` maps to the built-in "
         "`bash` tool). Steps that use it become model states.",
         "---\nallowed-tools: Read\n---\n# Skill\n\n1. Read the file.\n", _SKILL,
         "declare it in the machine by hand, or register an implementation", runnable=False, lang="markdown"),
    Code("SKM310", "draft-never-checked", E, "the LLM compiler's drafts never passed the checker",
         "The model redrafted the machine from the checker's diagnostics for the allowed number of rounds "
         "(`--rounds`) and every draft still had errors. Nothing is written; the errors of the last draft "
         "are shown.",
         "", "", "raise --rounds, use a stronger model, or build offline (no --model)", runnable=False,
         lang="markdown"),
    Code("SKM311", "draft-not-valid", W, "a model reply was not a valid machine draft",
         "A draft must be a JSON object that conforms to the IR JSON Schema (`skillc grammar --format "
         "json-schema`) and prints as a `.skm` machine that parses. An invalid reply costs a round; the "
         "problem is sent back to the model.",
         "", "", "the next round tells the model what was wrong", runnable=False, lang="markdown"),
    Code("SKM312", "quotation-not-in-skill", W, "a rule's quotation does not occur in the skill",
         "The LLM compiler keeps a rule only if its quotation occurs verbatim (modulo markdown) in the "
         "document. A paraphrased or invented quotation is dropped.",
         "", "", "quote the sentence exactly as the skill writes it", runnable=False, lang="markdown"),
    Code("SKM313", "rule-outside-interface", W, "a rule names an operation the machine does not have",
         "The LLM compiler keeps a rule only if every operation it names is a state, an instance or a tool "
         "of the machine's interface table.", "", "",
         "name a state or a declared tool", runnable=False, lang="markdown"),
    Code("SKM314", "model-failed", E, "the model backend failed",
         "The LLM compiler could not get an answer from the configured backend (connection refused, HTTP "
         "error, timeout, a model that cannot be loaded). Nothing is written.",
         "", "", "check the endpoint and model name, or build offline (no --model)", runnable=False,
         lang="markdown"),
]

for _code in CODES:
    register(_code)
