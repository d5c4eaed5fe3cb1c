"""Phrases of the structural compiler: what one sentence says, read by cue words.

Pure functions of text (no graph): the condition and action of an `If` sentence,
the stop clause of an arm, "at most N times", the command a step says to run,
and the regular expressions the graph phase matches sentences against. Records
(`IfThen`, `Stop`) are frozen.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import attrs

from skillc.frontends.markdown.clauses import CASE_ARROW, WHEN_FIRST, Clause, first_word, is_imperative, strip_markup
from skillc.frontends.markdown.names import content_stems, slug
from skillc.ir.machine import Outcome

NUMBER_WORDS = {"once": 1, "twice": 2, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                "seven": 7, "eight": 8, "nine": 9, "ten": 10}

# Fences that `bash` cannot run as they are (Windows shells).
NOT_BASH = frozenset({"powershell", "ps1", "cmd", "bat"})
# A condition about a command's failure, answered by its exit status, not by a model: the command itself failing,
# whatever it prints (`EXIT_FAILS`), or a state it reports by failing ("unauthenticated", "not installed").
_EXIT_WORDS = r"fails?|failed|failing|non-zero|errors? out|exits? with an error|does not (?:succeed|work)|doesn't work"
FAILS = re.compile(r"\b(?:" + _EXIT_WORDS + r"|does not (?:apply|exist)|doesn't apply|cannot be|can't be|"
                   r"unauthenticated|unauthori[sz]ed|not (?:authenticated|logged in|installed|found|available)|"
                   r"unavailable|missing)\b", re.I)
# A command that answers in its output (`--json`, `-o json`): it exits 0 whatever it reports, so a condition naming
# only a state ("If it's not available", "missing") is read from what it printed, not from its exit status.
REPORTS_IN_OUTPUT = re.compile(r"(?:^|\s)(?:--json\b|--(?:output|format)[= ]json\b|-o\s*json\b)")
# A condition about the command itself failing, whatever it prints.
EXIT_FAILS = re.compile(r"\b(?:" + _EXIT_WORDS + r")\b", re.I)
# A step done with the Edit tool: "Use **Edit** when the insertion point is relative to existing code", "Use Edit tool
# for code changes" (the tool's name, capitalised).
EDIT_TOOL = re.compile(r"^(?:[Tt]hen\s+)?(?:[Uu]se|[Ww]ith|[Uu]sing|[Vv]ia)\s+(?:the\s+)?(?:\*\*|`)?Edit(?:\*\*|`)?"
                       r"(?:\s+tool)?\b")
# Work said to follow every step of a verb, apart from those steps: "After installing a skill, tell the user …".
HOOK = re.compile(r"^(?:after|once|whenever)\s+(?P<verb>[a-z]+)ing\b[^,:]{0,60},\s*(?P<act>.+)$", re.I)
# A command run to find failures ("Run `make test` to identify all failing tests"): its non-zero exit is the finding.
FINDS_FAILURES = re.compile(r"\bto (?:identify|find|list|see|show|collect|surface|detect|get|reveal)\b[^.]*"
                            r"\b(?:fail\w*|errors?|issues|problems|violations|warnings|findings)\b", re.I)
# The run hands the turn back to the user, the work not done: "finish your answer and tell them", "the user will have
# to restart": a section ending so ends the run `partial`.
HANDS_BACK = re.compile(r"\b(?:finish|end|wrap up)\s+(?:your|the|this)\s+(?:answer|response|reply|turn)\b|"
                        r"\bthe user (?:will )?(?:have|has|need|needs) to restart\b", re.I)
# What to do when the command fails is only to tell of it ("report the error to the user"): the run cannot go on.
REPORTS_ONLY = re.compile(r"^(?:report|tell|inform|explain|show|notify|surface|print|relay)\b(?!.*\b(?:continue|"
                          r"proceed|go on|then|retry|try|fix|fall ?back|instead|otherwise|skip)\b).*\b(?:error|"
                          r"failure|problem|issue|message|output)s?\b", re.I)
# A question that asks for approval: its answer decides whether the run goes on.
APPROVAL = re.compile(r"\b(?:approv\w*|confirm\w*|permission|go-ahead|sign-?off|consent)\b", re.I)
# A step that reads a file it names without its path: "RE-READ the project's rules file", "Read the full workflow".
UNNAMED_FILE = re.compile(r"^(?:re-?read|read|open|load)\b(?!.*[`<{\[]|.*\w\.[a-z]{2,5}\b).*\b(?:file|workflow|"
                          r"config(?:uration)?|manifest)\b", re.I)
# A stop clause: the verb that ends the run, and the outcome words after it.
_STOP = re.compile(r"(?:,?\s*(?:and|then)\s+)?\b(stop|abort|give up|halt|end the (?:procedure|run)|exit|finish)\b"
                   r"(?![-\w])(.*)$", re.I)
# Inline commands a step says to run: "Run `pytest -q`", "Build it with `python -m build`",
# "Run diagnostics: `npx expo-doctor`".
_RUN_INLINE = re.compile(r"\b(?:run|execute|invoke|with|using|via)\s+`([^`]+)`|"
                         r"\b(?:run|execute|invoke)\b[^`.;:]{0,60}:\s*`([^`]+)`", re.I)
# A step that shows its command after a colon, the command ending it: "Clear the Gradle cache for Android: `cmd`".
_SHOWN_COMMAND = re.compile(r"^\s*(?:\*\*)?([A-Z][^`:*]{2,80}?)(?:\*\*)?:\s*`([^`]+)`\s*\.?\s*$")
# What introduces an example, not something to do: a command after it is a sample.
EXAMPLE_CUE = re.compile(r"\b(?:e\.g\.|eg\.|for example|for instance|such as|like)(?=[\s,:])", re.I)
# Names that mark a command as a sample: `path/to/x`, `my-feature`, `foo`, `example.com`.
SAMPLE_NAMES = re.compile(r"\bpath/to/|(?<![\w-])my[-_][a-z]|\b(?:foo|bar|baz|qux)\b|\bexample\.(?:com|org|net)\b|"
                          r"(?<![\w-])your[-_][a-z]|\bxxx+\b", re.I)
# A bundled script the skill mentions: `scripts/x.py`, `<skill-dir>/scripts/x.sh`, `{baseDir}/scripts/x.js`.
SCRIPT = re.compile(r"(?<![\w.-])((?:[^\s`'\"()]*/)?scripts/[\w.-]+\.(?:py|sh|bash|js|mjs|cjs|ts|rb))(?![\w/-])")
INTERPRETERS = {"py": "python3", "sh": "bash", "bash": "bash", "js": "node", "mjs": "node", "cjs": "node",
                "ts": "npx tsx", "rb": "ruby"}
# A step that runs a command formed by an earlier step.
RUN_FORMED = re.compile(r"\b(?:run|execute)\s+(?:the|that|this)\s+command\b", re.I)
# A step that forms a command from a template: "Form the command `printf %s X > f`, replacing `X` with the letter".
FORM = re.compile(r"\b(?:form|build|compose|construct|prepare|write)\s+the\s+command\s+`([^`]+)`"
                  r".*?\breplacing\s+`([^`]+)`\s+with\s+(?:the\s+)?([^.,;]+)", re.I)
# A value to choose among lettered options: "one letter from A–E", "options A to E".
LETTER = re.compile(r"\bletter\b", re.I)
_RANGE = re.compile(r"\b([A-Z])\s*(?:–|—|-|to)\s*([A-Z])\b")
# Comparisons of the latest command output with a held value, which a guard can decide.
EXACTLY = re.compile(r"^(?:the\s+)?(?:file\s+)?(?:content|contents|output)\b.*?\b(?:is|equals|matches)\s+"
                     r"(?:exactly\s+)?(?:the\s+)?(.+?)\s*$", re.I)
DIFFERS = re.compile(r"^(?:the\s+)?(?:file\s+)?(?:content|contents|output)\b.*?\b(?:differs|does\s+not\s+match)\b",
                     re.I)
# User interaction: the answer must come from the user.
ASK = re.compile(r"^(?:(?:stop|pause|halt)(?:\s+here)?\s*(?:,|and)\s*)?(?:ask|prompt|consult|check with)\s+"
                 r"(?:the\s+)?user\b|\b(?:with|from|by)\s+the\s+user\b|"
                 r"\bwait\s+for\s+(?:the\s+)?user|\bthe\s+user'?s\s+(?:choice|answer|confirmation|approval|decision)\b|"
                 r"^confirm\b.*\buser\b|\bAskUserQuestion\b|"
                 r"\b(?:request|get|obtain|seek|await|wait for)\s+(?:(?:their|the user'?s?|explicit|written)\s+)*"
                 r"(?:approval|confirmation|sign-off|go-ahead)\b|"
                 r"(?:^|\band\s+|,\s*)ask\s+(?:them\s+|the\s+user\s+)?(?:whether|if|which|what|for|about|to)\b|"
                 r"\blet\s+(?:them|the\s+user)\s+(?:decide|choose|pick)\b", re.I)
# "…, ask the user and install it before proceeding", "fall back to asking the user for the key": asking the user
# anywhere in the sentence, unless it declines to ("instead of asking the user", "no need to ask the user") or the
# asking follows a case's label ("Multiple matches: ask the user to choose" is not read as a case).
_ASKS_USER = re.compile(r"(?<!:\s)\bask(?:ing)?\s+(?:the\s+)?user\b", re.I)
_DECLINES = re.compile(r"(?:\b(?:not|never|without|avoid|instead\s+of|rather\s+than|no\s+need\s+to)|n[’']t)\W+"
                       r"(?:(?:to|ever|even|repeatedly|again|(?:stop|bother|need)\s+to)\W+)?ask", re.I)


def asks_user(text: str) -> bool:
    """The sentence has the user answer: `ASK`'s cues, or asking the user anywhere in it that it does not decline."""
    return bool(ASK.search(text)) or (bool(_ASKS_USER.search(text)) and not _DECLINES.search(text))


# Where a step's own work ends and its question to the user begins ("Draft a plan and request approval").
ASK_AFTER = re.compile(r"(?:,\s*|\s+)(?:and|then)\s+(?=(?:ask|request|get|obtain|seek|await|wait for|confirm|let)\b)",
                       re.I)
# Optional work without an "If".
OPTIONAL = re.compile(r"\b(?:only (?:when|if)|if needed|if necessary|if applicable|if required|where relevant|"
                      r"optionally|when asked|if asked|if you want|as needed)\b", re.I)
# A step done only in a case its sentence ends with: "Ask the user to clarify if the scope is ambiguous", "Resolve the
# PR number — skip if the user supplied one". Not a check ("Determine if …"), a failure ("Install if it fails") or a
# case `OPTIONAL` reads ("if needed").
_CASE_IF = re.compile(r"\s*(?:[—–-]\s*)?(?P<skip>\bskip\s+)?\bif\s+", re.I)
# Actions whose "if" is not the step's case: a check ("Determine if"), a jump or an end ("Go back … if"), a purpose
# ("so you can recover if"), "even if", "as if".
_CHECK_VERBS = r"determine|decide|check|ensure|verify|see|test|assess|evaluate|confirm|find out|judge|note|tell"
_NOT_CASES = re.compile(r"^(?:" + _CHECK_VERBS + r"|figure out|work out|ask whether|record|report|say|state|go|return|"
                        r"repeat|retry|continue|start over|jump|loop|stop|abort|exit|end)\b|\bfail(?:s|ing)?\b|"
                        r"\bso\b|\bin order to\b|\b(?:can|could) \w+$|\b(?:as|even|only|and|or)$",
                        re.I)


# Conditions too vague to judge ("if needed", "if any"): `OPTIONAL`'s, or none.
_VAGUE_CASE = re.compile(r"(?:needed|necessary|any|so|possible|applicable|present|available|relevant|desired|"
                         r"appropriate|required|you (?:want|like|prefer)|it (?:helps|applies))\b", re.I)
# A verb whose "if" asks a question rather than sets a case: "check if", "see if", "ask the user if".
_ASKS_IF = re.compile(r"\b(?:" + _CHECK_VERBS + r"|ask(?: the user| them)?|know|look|investigate)$", re.I)


@attrs.frozen
class Case:
    """The case a step is done in: its condition, and whether the step is skipped (not done) when it holds."""

    condition: str
    skip: bool


def trailing_case(text: str) -> Case | None:
    """The case a step's sentence ends with ("… if the scope is ambiguous", "— skip if the user supplied one"), for
    an instruction whose action is not a check; None otherwise."""
    plain = re.sub(r"\s*\((if [^()]+)\)$", r" \1", strip_markup(text).strip())  # "Set up X (if not configured)"
    plain = WHEN_FIRST.sub("", plain)
    # The case is the sentence's end: the first "if" after its last comma or semicolon (found in one pass).
    m = _CASE_IF.search(plain, max(plain.rfind(","), plain.rfind(";"), 4) + 1)
    act, cond = (plain[:m.start()], plain[m.end():].rstrip(":. ")) if m is not None else ("", "")
    if m is None or len(cond) < 4 or not re.match(r"\w", act) or _NOT_CASES.search(act) or OPTIONAL.search(plain) \
            or FAILS.search(cond) or re.search(r";|\bor\b", act) or _ASKS_IF.search(act) or _VAGUE_CASE.match(cond) \
            or re.search(r"\b(?:what|how|when|where|whether|why|which)\b", act, re.I) \
            or re.search(r"\bthen\b", cond, re.I):  # "Explain what happens if …"; "… if C and then restart"
        return None
    return Case(cond.strip(), m.group("skip") is not None)


# A reference to a section further down (or up): "as described under Spam handling (below)".
REFERENCE = re.compile(r"\b(?:as described (?:under|in)|described (?:under|in)|see|following|per|as in|according to|"
                       r"under)\s+(?:the\s+)?(.+?)\s*\((?:below|above)\)", re.I)
# "At any point (during phase 3), if C, return to phase 1".
ANY_POINT = re.compile(r"\b(?:at any (?:point|time|stage)|whenever)\b(?:\s+(?:during|in)\s+(?:phase|step|stage)\s+"
                       r"(?P<during>\d+))?[^.]*?(?:\bif\s+(?P<cond>[^,]+),)?[^.]*?\b(?:return|go back|jump back|"
                       r"revert|restart)\s+(?:to|at|from)\s+(?:the\s+)?(?:phase|step|stage)\s+(?P<target>\d+)", re.I)
# What stops a run because the work could not be done: said before "stop", or in the arm's condition.
TROUBLE = re.compile(r"\b(?:fail\w*|errors?|cannot|can't|could not|couldn't|unable|missing|not (?:found|installed|"
                     r"available|authenticated|ready|set)|unavailable|blocked|broken|invalid|denied|refused|"
                     r"unauthenticated|no longer)\b", re.I)
# After "stop": the run waits for the user instead of ending.
WAIT_FOR_USER = re.compile(r"^\s*(?:,|and|then)?\s*(?:ask|wait for|check with|confirm with|consult)\b", re.I)
BACK = re.compile(r"\b(?:go back|return to|start over|restart (?:from|at|with))\b", re.I)
# "continue to step N", "go to step N", "proceed with step N".
FORWARD = re.compile(r"\b(?:continue|go|proceed|skip|jump|move on)\s+(?:on\s+)?(?:to|with)\s+step\s+(\d+)\b", re.I)
# "Decide whether C." and the arms that stand for it ("If it does").
DECIDE = re.compile(r"^(?:decide|determine|judge|check|assess|establish|find out)\s+(?:whether|if)\s+(.+?)\.?$", re.I)
ANAPHORIC = re.compile(r"^(?:it|they|this|that|so|yes|no|not)(?:\s+(?:does|do|is|are|holds?|is the case|is so|"
                       r"isn't|doesn't|does not|is not))?(?:\s+not)?$", re.I)
OTHERWISE = re.compile(r"^(?:otherwise|else)\b", re.I)
# A sentence that offers a menu of options, ending with a colon before the list of them.
MENU = re.compile(r"(?:^options|\b(?:present|offer|give|show)\b[^.]*\b(?:options|choices)|"
                  r"\bchoose (?:one|between|from|among)|"
                  r"\bpick (?:one|from)|\bselect (?:one|from)|\bone of the following|\bexactly (?:these|the following)|"
                  r"\b(?:based on|depending on|according to) (?:the |what the )?(?:task|request|situation|context|user)"
                  r"|\bwhich (?:option|one)\b)[^.]*:$", re.I)
# A menu the task decides (a judge), not the user (a question).
BY_TASK = re.compile(r"\b(?:based on|depending on|according to) (?:the |what the )?"
                     r"(?:task|request|situation|context)\b", re.I)
# A section title that is one of several alternatives: "Yellow Zone (40-60 tool calls)", "Mode B", "If …".
ALTERNATIVE = re.compile(r"\((?:[^)]*\d[^)]*|(?:if|when|for|only)\b[^)]*)\)|^(?:if|when|for|option|mode|case|scenario|"
                         r"route|path)\b|\b(?:zone|mode|option|case|scenario|route|tier|variant)\b", re.I)
# A heading that is a condition: its section is done only when it holds ("## 3) If the user chooses comments").
GATE = re.compile(r"^(?:if|when|only if|only when|in case)\b", re.I)
# The last step of a "For each X:" list that moves on to the next X: the loop's back edge.
NEXT_ITEM = re.compile(r"^(?:then\s+)?(?:(?:move|go|continue|proceed)\s+(?:on\s+)?(?:to|with)\s+(?:the\s+)?next|"
                       r"repeat\s+(?:for|with)\s+(?:the\s+)?(?:next|remaining|each)|next\s+\w+\s*$)", re.I)


@attrs.frozen
class IfThen:
    """`If C, A`: the condition and the action ('' when the sentence has none)."""

    condition: str
    action: str


@attrs.frozen
class Stop:
    """An arm that ends the run: the action said before the stop, the terminal it names and its outcome."""

    before: str
    terminal: str
    outcome: Outcome


def again(text: str) -> bool:
    """The text repeats something ("again", "retry", "re-run")."""
    return bool(re.search(r"\b(?:again|retry(?:ing)?|rerun(?:ning)?|re-run(?:ning)?|repeat)\b", text, re.I))


def letter_range(text: str) -> tuple[str, ...] | None:
    """The letters of the first range a document names ("A–E", "A to E"), for a letter to choose."""
    for m in _RANGE.finditer(text):
        a, b = ord(m.group(1)), ord(m.group(2))
        if 0 < b - a < 26:
            return tuple(chr(c) for c in range(a, b + 1))
    return None


def quote(c: Clause) -> str:
    """A clause's text as a rule quotes it."""
    return re.sub(r"\s+", " ", c.text).strip()


def unbold(text: str) -> str:
    """Text on one line without bold or italic markers, code ticks kept."""
    return re.sub(r"\s+", " ", re.sub(r"\*\*|__|(?<!\w)\*(?=\w)|(?<=\w)\*(?!\w)", "", text)).strip()


def inline_command(text: str) -> str | None:
    """The shell command a sentence says to run in backticks ("Run `pytest -q`"), if it looks like one.

    A command given as an example ("for example, run `gh auth login` once") or with sample
    names (`path/to/x`, `my-feature`) is not one to run.
    """
    shown = _SHOWN_COMMAND.match(text)
    found = [*_RUN_INLINE.finditer(text)]
    if shown is not None and is_imperative(shown.group(1)):  # "Clear the Gradle cache: `cd android && ./gradlew clean`"
        found.append(shown)
    for m in found:
        cmd = (m.group(1) if m.re is _RUN_INLINE and m.group(1) else m.group(2)).strip()
        if in_example(text, m.start()) or SAMPLE_NAMES.search(cmd):
            continue
        if re.match(r"^(?:\./|[a-z][\w.-]*\s)", cmd) and not re.match(r"^[\w-]+\.(?:md|txt|toml|json|ya?ml)$", cmd):
            return cmd
    return None


def in_example(text: str, at: int) -> bool:
    """Position `at` of a sentence is inside an example: after "e.g." or "for example", in the same parenthesis or
    clause."""
    before = text[:at]
    cue = None
    for cue in EXAMPLE_CUE.finditer(before):  # noqa: B007 - keeps the last match, used after the loop
        pass
    if cue is None:
        return False
    between = before[cue.end():]
    return ")" not in between and not re.search(r"[;.]\s|,\s*(?:then|and then)\b", between)


def script_mention(text: str) -> str | None:
    """The bundled script a sentence says to run or use ("Run scripts/fetch_comments.py"), not as an example."""
    plain = strip_markup(text)
    if not re.search(r"\b(?:run|use|execute|invoke|call|launch|start)\b", plain, re.I):
        return None
    for m in SCRIPT.finditer(plain):
        if not in_example(plain, m.start()):
            return m.group(1)
    return None


#: "Run the bundled script", "use the helper script": the script of a folder that bundles one.
_THE_SCRIPT = re.compile(r"\b(?:run|use|execute|invoke|call)\s+the\s+(?:bundled|helper|provided|included)\s+script\b",
                         re.I)


def named_script(text: str, scripts: frozenset[str]) -> str | None:
    """The bundled script a step names by its words ("List curated skills" runs `scripts/list-curated-skills.py`:
    the step opens with the script's first word and holds at least two thirds of its words), or by "the bundled
    script" where the folder bundles one; None when none or several fit equally."""
    plain = strip_markup(text)
    if _THE_SCRIPT.search(plain) and len(scripts) == 1 and not in_example(plain, 0):
        return next(iter(scripts))
    said = content_stems(plain)
    first = content_stems(first_word(plain))
    scored = []
    for path in sorted(scripts):
        name = re.sub(r"\.\w+$", "", path.rsplit("/", 1)[-1])
        words = [w for w in re.split(r"[^A-Za-z0-9]+", name) if w]
        stems = content_stems(" ".join(words))
        lead = content_stems(words[0]) if words else set()
        if len(stems) >= 2 and lead and lead <= first and 3 * len(stems & said) >= 2 * len(stems):
            scored.append((len(stems & said) / len(stems), path))
    scored.sort(reverse=True)
    if not scored or (len(scored) > 1 and scored[0][0] == scored[1][0]):
        return None
    return scored[0][1]


def script_usage(text: str, script: str) -> str:
    """How a document shows `script` run (its first code span or fence line naming it, optional `[…]` arguments
    left out), else the script alone."""
    for m in re.finditer(r"`([^`\n]*" + re.escape(script) + r"[^`\n]*)`|^\s*(?:\$\s+)?((?:(?:python3?|node|bash|sh|"
                         r"ruby|uv\s+run|npx\s+tsx)\s+)?[\"']?[^\s\"']*" + re.escape(script) + r"[\"']?(?:\s.*)?)$",
                         text, re.M):
        usage = (m.group(1) or m.group(2) or "").strip()
        while (shorter := re.sub(r"\s*\[[^\[\]]*\]", "", usage)) != usage:
            usage = shorter
        if any(w.strip("\"'").endswith(script) for w in usage.split()[:2]):
            return usage
    return ""


def exits_on_findings(text: str, script: str) -> bool:
    """The document says `script` exits non-zero on what it finds ("Exits non-zero when failures remain"), in the
    section its path heads or in a sentence naming it: that exit status is a finding, not a failure."""
    name = re.escape(script.rsplit("/", 1)[-1])
    said = r"\bexits?\s+(?:non-?zero|with (?:code|status) [1-9])\s+(?:when|if)\b"
    heads = r"^#+[^\n]*" + name + r"[^\n]*\n(?:[^#\n][^\n]*\n|\n)*?[^\n]*?"  # the section its path heads
    return re.search(heads + said, text, re.M | re.I) is not None \
        or re.search(name + r"[^.\n]*" + said, text, re.I) is not None


#: A step that writes a file: its verb opens the sentence ("Write `NOTES.md` …", "Then save the report to REPORT.md").
WRITE_VERB = re.compile(r"^(?:(?:first|then|next|now|finally|also|optionally)\b,?\s+)?"
                        r"(?:write|save|store|produce|output|export|create|generate)\b", re.I)


def _file_path(extensions: str) -> re.Pattern[str]:
    """A relative path with one of `extensions` (a regex alternation), not part of a longer path, an absolute, home,
    Windows or environment path, or a placeholder: group 1 is the path."""
    return re.compile(r"(?<![\w/.~\]>}\\:%-])((?:\.?\w[\w.-]*/)*\.?\w[\w.-]*\.(?:" + extensions + r"))"
                      r"(?![\w/\\\[<{-]|\.\w)", re.I)


#: A document-like file a step names, relative to the work folder ("NOTES.md", "`.claude/pipeline/doc.md`").
WRITTEN_FILE = _file_path(r"md|markdown|txt|json|ya?ml|html?|csv|toml|xml|log")
#: Words before a file that make it a source or a subject, not what the step writes ("the summary of README.md",
#: "following template.md", "tests for parser.md", "a pull request that updates CHANGELOG.md").
_NOT_WRITTEN = re.compile(r"\b(?:from|of|for|using|following|per|than|alongside|about|like|updat\w*|read\w*|"
                          r"pars\w*|modif\w*|edit\w*)\s+(?:(?:the|a|an|its|each|every|this|that)\s+)?$", re.I)
#: Words that deny the write ("not to result.json", "do not touch NOTES.md").
_DENIED = re.compile(r"\b(?:not|never|don't|do not|without|instead of)\b", re.I)
#: Words that make a file the destination ("… to SUMMARY.md", "… into out.json", "… as report.md").
_DESTINATION = re.compile(r"\b(?:to|into|as)\s+(?:(?:the|a|an)\s+)?(?:file\s+)?$", re.I)


#: A file of the work folder a step names to read ("`package.json`", "src/app.py", "`.github/workflows/ci.yml`").
READ_FILE = _file_path(r"md|markdown|txt|json|ya?ml|html?|csv|toml|xml|log|cfg|ini|py|js|mjs|cjs|ts|tsx|jsx|go|rs|java|"
                       r"rb|sh")


def _files(text: str, pattern: re.Pattern[str]) -> Iterator[tuple[str, str]]:
    """(path, the text before it) of each file a sentence names that the sentence does not deny: not a placeholder
    (`<name>.md`, `[topic].md`, `$X.md`), a URL, an example ("e.g. out.md"), or one after "not", "never" in its
    clause; `./` taken off."""
    plain = re.sub(r"(?<![\w./])\./", "", text.replace("`", " "))
    for m in pattern.finditer(plain):
        before, after = plain[:m.start()], plain[m.end():]
        if re.search(r"[<\[{]$|://\S*$|\$$", before) or re.match(r"^[>\]}]", after) or in_example(plain, m.start()):
            continue
        if not _DENIED.search(re.split(r"[;,.:]\s", before)[-1]):
            yield m.group(1), before


#: What stands between a reading verb and its file: "Read `x`", "Review the file x", "Then open the x".
_VERB_OBJECT = re.compile(r"^\s*(?:(?:first|then|next|now|also)\b,?\s+)?[A-Za-z]+\s+(?:the\s+)?(?:file\s+)?$", re.I)
#: A file the sentence allows to be missing: "if it exists", "if present".
_MAYBE_MISSING = re.compile(r"\bif (?:it |one |any |they )?(?:exists?|is present|are present)\b|\bif present\b|"
                            r"\bwhen present\b|\bif available\b|\bif there is\b", re.I)


def read_file(text: str) -> str | None:
    """The work-folder file a sentence reads (`_files`), named as its verb's object: "Read `package.json` to find
    the version" → package.json; not "Read the repo and produce `out.md`", "Follow the patterns (check X.md)", or a
    file the sentence allows to be missing ("if it exists"): None."""
    if _MAYBE_MISSING.search(text):
        return None
    return next((path for path, before in _files(text, READ_FILE) if _VERB_OBJECT.match(before)), None)


def written_file(text: str) -> str | None:
    """The file a step says to write ("Write `NOTES.md` with …", "Save the review to review.md"), else None: a file
    `_files` names that the sentence does not read or talk about ("the summary of README.md"); of two files, the
    destination ("… to SUMMARY.md"), else none."""
    if not WRITE_VERB.match(strip_markup(text)):
        return None
    found = [(path, bool(_DESTINATION.search(before))) for path, before in _files(text, WRITTEN_FILE)
             if not _NOT_WRITTEN.search(before)]
    if len({p for p, _ in found}) == 1:
        return found[0][0]
    destinations = {p for p, to in found if to}
    return destinations.pop() if len(destinations) == 1 else None


#: A step's label in capitals before its action: "CHECKPOINT - write state to handoff document".
_LABEL = re.compile(r"^[A-Z][A-Z_-]{2,}\s*[-—–:]\s+")
#: A file name holding a placeholder: "`[process]-flowchart.html`", "`<name>.md`", "`reports/{date}.json`".
_NAMED_LATER = re.compile(r"`((?:[\w.-]*/)*[\w.-]*(?:\[[\w -]+\]|<[\w -]+>|\{[\w -]+\})[\w.\[\]<>{} -]*\.(?:"
                          r"md|markdown|txt|json|ya?ml|html?|csv|toml|xml|log))`")


def written_pattern(text: str) -> str | None:
    """The file a step says to write whose name holds a placeholder ("Write to `[process]-flowchart.html`"), where
    it is the sentence's only such name and no other file is named; else None. The run names it from the task."""
    plain = _LABEL.sub("", text.strip())
    if not WRITE_VERB.match(strip_markup(plain)) or written_file(plain) is not None:
        return None
    found = {m.group(1) for m in _NAMED_LATER.finditer(plain)
             if not _DENIED.search(plain[:m.start()]) and not in_example(plain, m.start())}
    return found.pop() if len(found) == 1 else None


#: A file a step writes without naming it: "… to handoff document", "… with a descriptive filename".
_UNNAMED_WRITTEN = re.compile(r"\b(?:to|into)\s+(?:(?:a|an|the|your|its)\s+)?(?:[\w-]+\s+)?(?:document|file|doc)"
                              r"\s*[.:]?$|\bwith an?\s+(?:descriptive\s+|meaningful\s+|clear\s+)?file\s?name\b", re.I)


def written_unnamed(text: str) -> str | None:
    """The words for a file a step says to write without naming it ("CHECKPOINT - write state to handoff document"
    → "handoff document"), where it names no file and no file pattern; else None."""
    plain = _LABEL.sub("", strip_markup(text))
    if not WRITE_VERB.match(plain) or written_file(plain) is not None or written_pattern(text) is not None:
        return None
    m = _UNNAMED_WRITTEN.search(plain)
    if m is None or _DENIED.search(plain[:m.start()]):
        return None
    return re.sub(r"^(?:to|into)\s+|\s*[.:]$", "", m.group(0), flags=re.I)


def stop_clause(plain: str, condition: str = "") -> Stop | None:
    """The stop an arm ends the run with, else None.

    "stop with failure", "give up and report failure" end `failed`; "finish as
    **unverified** (partial)" ends in a terminal named by the document; a plain
    "stop" ends `success` (the procedure says the work is over, not that it failed),
    unless what comes before it or the arm's `condition` says the work could not be
    done ("If the key is missing, report it and stop"): then `failed` (or `partial`).
    "Stop and ask the user …" is no stop: the run waits for the user's answer.
    """
    for m in _STOP.finditer(plain):
        verb, rest = m.group(1).lower(), m.group(2)
        if not re.match(r"^\s*(?:here|now|immediately|the (?:procedure|run|task))?\s*"
                        r"(?:[,;:(]?\s*(?:with|as|and|reporting|without|in|\()\b.*)?$", rest, re.I):
            continue
        if WAIT_FOR_USER.match(rest):
            return None  # "stop and ask the user": a question, the run goes on with the answer
        before = plain[: m.start()].strip(" ,;")
        outcome = _stop_outcome(verb, rest, f"{before} {condition}")
        return Stop(before, _stop_terminal(verb, rest, outcome), outcome)
    return None


def _stop_outcome(verb: str, rest: str, context: str = "") -> Outcome:
    """The outcome a stop clause states, implies by its verb or by the trouble it stops on, or else `success`."""
    stated = re.search(r"\b(success|successful|partial|failure|failed)\b", rest, re.I)
    if stated is not None:
        said: dict[str, Outcome] = {"success": "success", "successful": "success", "partial": "partial"}
        return said.get(stated.group(1).lower(), "failed")
    if verb in ("abort", "give up") or re.search(r"\b(?:fail\w*|errors?)\b", rest, re.I):
        return "failed"
    if re.search(r"\b(?:unverified|incomplete|partially)\b", rest, re.I):
        return "partial"
    if re.search(r"\b(?:partial|partially|incomplete|unverified)\b", context, re.I):
        return "partial"
    if TROUBLE.search(context):
        return "failed"
    return "success"


def _stop_terminal(verb: str, rest: str, outcome: Outcome) -> str:
    """The terminal a stop clause names ("as **unverified**"), else one named after its outcome."""
    named = re.search(r"\bas\s+(?:an?\s+|the\s+)?([A-Za-z][\w-]*)", rest)
    if named is not None and named.group(1).lower() not in ("a", "an", "the", "failure", "success"):
        return slug(named.group(1), 1, "stopped")
    return {"failed": "aborted" if verb in ("abort", "give up") else "failure", "partial": "incomplete",
            "success": "stopped"}[outcome]


def if_parts(text: str) -> IfThen:
    """`If C, A` → (C, A); the action is '' when the sentence has none."""
    plain = strip_markup(text).rstrip(".")
    plain = re.sub(r"^(?:[A-Z][A-Za-z ]{0,20}:)\s+", "", plain)
    # Commas and colons inside parentheses do not end the condition: "(non-zero exit, permission error)".
    masked = re.sub(r"\([^()]*\)", lambda p: p.group(0).replace(",", "\x01").replace(":", "\x02"), plain)
    m = re.match(r"^(?:if|in case|unless|should|when)\s+(.*?)(?:,\s*(?:then\s+)?|\s+then\s+|:\s+|\s+[—–]\s+)(.+)$",
                 masked, re.I)  # "If C, A", "If C then A", "If C: A", "If C — A"
    after = re.match(r"^((?:stop|abort|halt|give up)\b.*?),?\s+\b(?:if|when|unless)\b\s+(.+)$", masked, re.I)
    if not m and after is not None:  # "Stop and report if C": the action comes first
        return IfThen(plain[after.start(2):after.end(2)].strip(), plain[after.start(1):after.end(1)].strip())
    arrow = CASE_ARROW.match(masked)
    if not m and arrow is not None:  # "Simple change → use the quick plan": a case and what it does
        return IfThen(plain[arrow.start(1):arrow.end(1)].strip(), plain[arrow.start(2):arrow.end(2)].strip())
    if not m:
        return IfThen(re.sub(r"^(?:if|in case|unless|should|when)\s+", "", plain, flags=re.I), "")
    return IfThen(plain[m.start(1):m.end(1)].strip(), plain[m.start(2):m.end(2)].strip())


def max_times(text: str) -> int | None:
    """N from "at most N times", "up to N attempts", "N times", "twice"."""
    number = r"(\d+|once|twice|one|two|three|four|five|six|seven|eight|nine|ten)"
    m = re.search(r"\b(?:at most|up to|no more than|maximum of|max(?:imum)?)?\s*" + number +
                  r"\s+(?:times|attempts|tries|rounds|iterations)\b", text, re.I) \
        or re.search(r"\b(?:at most|up to|no more than|maximum of)\s+" + number + r"\s+\w+", text, re.I)
    if not m:
        return None
    word = m.group(1).lower()
    return int(word) if word.isdigit() else NUMBER_WORDS.get(word)


def prohibited_action(text: str) -> str:
    """The action a prohibition forbids: "NEVER paste X into Y" → "paste X into Y"."""
    m = re.search(r"\b(?:never|do not|don't|must not|mustn't|shall not|should not|may not|cannot|avoid)\b\s*(.*)$",
                  text, re.I)
    return m.group(1) if m and m.group(1) else text


#: A sentence that checks something ("Confirm `Project` is the frontend project."): what "If not, stop." denies.
CONFIRMED = re.compile(r"^(?:confirm|check|verify|ensure|make sure)\s+(?:that\s+)?((?!to\b).+?\b(?:is|are|was|were|"
                       r"has|have|exists?|passes|pass|works|succeeds|runs|contains|matches)\b.*?)\.?$", re.I)
#: An arm that denies what it stands for: "If not", "If it isn't", "If it doesn't", "If no".
_DENIES = re.compile(r"\b(?:not|no)\b|n[’']t\b", re.I)


def lead_condition(lead: Clause | None, cond: str, before: Clause | None = None) -> str:
    """The condition an arm like "If it does" stands for: the lead's "whether …", else what the sentence before it
    checks ("Confirm X. If not, stop.")."""
    if not ANAPHORIC.match(cond.strip()):
        return cond
    decided = DECIDE.match(strip_markup(lead.text)) if lead is not None else None
    if decided is None and before is not None and lead is None:
        decided = CONFIRMED.match(strip_markup(before.text))
    if decided is None:
        return cond
    asked = decided.group(1)
    return asked if not _DENIES.search(cond) else f"not ({asked})"
