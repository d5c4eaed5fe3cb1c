"""The agent tool kit and capability sets: the one table the language, the checker and the runtime share.

Skills are written for agent harnesses whose tools are called Read, Write, Edit, Glob, Grep, Bash,
WebFetch and AskUserQuestion. skillc implements the same tools under `.skm` spellings (`read`, `write`,
`edit`, `glob`, `grep`, `bash`, `fetch`, `ask_user`); a machine names the kit with `use tools std` (or
`use tools std(read, bash)`) instead of redeclaring their signatures.

A skill's `allowed-tools` (agentskills.io front matter, Claude Code's spelling included: `Read`,
`Bash(git diff:*)`, `WebFetch(domain:example.com)`, `Edit(docs/**)`) becomes the machine's capability set
(`allow "Read", "Bash(git diff:*)"`). `parse_allowed` reads that list into `Capability` records; the checker
proves every tool state stays inside it and the runtime refuses a call outside it.

The places a run allows are values a machine can use: `skill_dir` (read-only: the folder the skill came
from) and `workdir` (the run's work folder, read-write). World predicates (`exists(path)`,
`file(path)`) may stand in a terminal's `requires`: the runtime evaluates them over the work folder on
arrival.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import urlsplit

import attrs

from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.machine import State, Tool, Variable

#: The kit's signatures, as `.skm` declarations would write them (one source of truth for docs and lowering).
KIT_SOURCE: Final[dict[str, str]] = {
    "read": "tool read(path: str, offset: int?, limit: int?) -> (content: str, lines: int)",
    "write": "tool write(path: str, content: str) -> (path: str, bytes: int, sha256: str)",
    "edit": "tool edit(path: str, old: str, new: str, all: bool?) -> (replacements: int, sha256: str)",
    "glob": "tool glob(pattern: str, path: str?) -> (files: list[str], count: int)",
    "grep": ("tool grep(pattern: str, path: str?, glob: str?, files_only: bool?, ignore_case: bool?)"
             " -> (matches: list[str], count: int)"),
    "bash": ("tool bash(command: str?, argv: list[str]?, cwd: str?, timeout: int?)"
             " -> (stdout: str, stderr: str, exit_code: int)"),
    "fetch": "tool fetch(url: str, max_bytes: int?) -> (status: int, content: str, content_type: str)",
    "ask_user": "tool ask_user(question: str, options: list[str]?) -> (answer: str)",
}

#: The kit's tools by `.skm` name.
KIT: Final[dict[str, Tool]] = {
    "read": Tool("read", (("path", T.STR), ("offset", T.OptionalT(T.INT)), ("limit", T.OptionalT(T.INT))),
                 (("content", T.STR), ("lines", T.INT))),
    "write": Tool("write", (("path", T.STR), ("content", T.STR)),
                  (("path", T.STR), ("bytes", T.INT), ("sha256", T.STR))),
    "edit": Tool("edit", (("path", T.STR), ("old", T.STR), ("new", T.STR), ("all", T.OptionalT(T.BOOL))),
                 (("replacements", T.INT), ("sha256", T.STR))),
    "glob": Tool("glob", (("pattern", T.STR), ("path", T.OptionalT(T.STR))),
                 (("files", T.ListT(T.STR)), ("count", T.INT))),
    "grep": Tool("grep", (("pattern", T.STR), ("path", T.OptionalT(T.STR)), ("glob", T.OptionalT(T.STR)),
                          ("files_only", T.OptionalT(T.BOOL)), ("ignore_case", T.OptionalT(T.BOOL))),
                 (("matches", T.ListT(T.STR)), ("count", T.INT))),
    "bash": Tool("bash", (("command", T.OptionalT(T.STR)), ("argv", T.OptionalT(T.ListT(T.STR))),
                          ("cwd", T.OptionalT(T.STR)), ("timeout", T.OptionalT(T.INT))),
                 (("stdout", T.STR), ("stderr", T.STR), ("exit_code", T.INT))),
    "fetch": Tool("fetch", (("url", T.STR), ("max_bytes", T.OptionalT(T.INT))),
                  (("status", T.INT), ("content", T.STR), ("content_type", T.STR))),
    "ask_user": Tool("ask_user", (("question", T.STR), ("options", T.OptionalT(T.ListT(T.STR)))),
                     (("answer", T.STR),)),
}

#: The kit a machine gets with `use tools std`.
KIT_NAMES: Final[tuple[str, ...]] = tuple(KIT)
#: Tools that only read the world (or ask): the rest change it.
READ_ONLY: Final[frozenset[str]] = frozenset({"read", "glob", "grep", "fetch", "ask_user"})

#: Harness spellings (lowercased) → kit names. Claude Code, the agentskills.io examples and common aliases.
HARNESS_NAMES: Final[dict[str, str]] = {
    "read": "read", "view": "read", "write": "write", "edit": "edit", "multiedit": "edit",
    "str_replace": "edit", "glob": "glob", "ls": "glob", "grep": "grep", "bash": "bash", "shell": "bash",
    "webfetch": "fetch", "fetch": "fetch", "askuserquestion": "ask_user", "ask_user": "ask_user",
    "askuser": "ask_user",
}

#: The places a machine can name, as read-only `str` values set by the runtime.
PLACES: Final[tuple[str, ...]] = ("skill_dir", "workdir")

#: World predicates allowed in a terminal's `requires`: name → (parameter types, result type).
WORLD_FUNCTIONS: Final[dict[str, tuple[tuple[T.Type, ...], T.Type]]] = {
    "exists": ((T.STR,), T.BOOL),
    "file": ((T.STR,), T.STR),
}


@attrs.frozen
class Capability:
    """One entry of an allowed-tools list.

    `tool` is the kit name (or the entry's own name, lowercased, when skillc has no such tool:
    `known` is then False). `prefix` is the command a `Bash(prefix:*)` entry allows to start with,
    `command` the exact command of `Bash(cmd)`; `pattern` the wildcard command of `Bash(npx *eas-cli@*)` (each
    `*` any text, spaces included, as Claude Code matches it); `paths` the glob of `Read(docs/**)`; `domain`
    the host of `WebFetch(domain:example.com)`. An entry with none of these allows every call of its tool.
    """

    spelling: str
    tool: str
    known: bool = True
    prefix: str | None = None
    command: str | None = None
    paths: str | None = None
    domain: str | None = None
    pattern: str | None = None

    @property
    def unrestricted(self) -> bool:
        """True when the entry allows every call of its tool."""
        return (self.prefix is None and self.command is None and self.paths is None and self.domain is None
                and self.pattern is None)


def wildcard_parts(pattern: str) -> list[str]:
    """A wildcard command split at its unescaped `*`s: the literal texts between them (`\\*` is a star)."""
    parts, current, i = [], "", 0
    while i < len(pattern):
        if pattern.startswith("\\*", i):
            current, i = current + "*", i + 2
        elif pattern[i] == "*":
            parts.append(current)
            current, i = "", i + 1
        else:
            current, i = current + pattern[i], i + 1
    return [*parts, current]


def wildcard_regex(pattern: str) -> re.Pattern[str]:
    """The regular expression a wildcard command matches whole (each `*`: any text)."""
    return re.compile(".*".join(re.escape(p) for p in wildcard_parts(pattern)), re.S)


_ENTRY = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*(?:__[A-Za-z0-9_-]+)*)\s*(?:\((.*)\))?\s*$", re.S)


def split_allowed(text: str) -> list[str]:
    """Split an allowed-tools value (space- or comma-separated; parentheses group) into entries."""
    entries, depth, current = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        if depth == 0 and (ch == "," or ch.isspace()):
            if current.strip():
                entries.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        entries.append(current.strip())
    return entries


def parse_capability(spelling: str) -> Capability | str:
    """One entry (`Bash(git diff:*)`) as a Capability, or a one-line problem."""
    m = _ENTRY.match(spelling)
    if m is None:
        return f"`{spelling}` is not a tool name with an optional (pattern)"
    name, pattern = m.group(1), m.group(2)
    tool = HARNESS_NAMES.get(name.lower())
    if tool is None:
        return Capability(spelling, name.lower() if name.islower() else name, known=False)
    if pattern is None or pattern.strip() in ("", "*"):
        return Capability(spelling, tool)
    pattern = pattern.strip()
    if tool == "bash":
        stars = len(wildcard_parts(pattern)) - 1
        if pattern.endswith(":*") and stars == 1:  # the legacy `prefix:*`
            return Capability(spelling, tool, prefix=pattern[:-2])
        if pattern.endswith("*") and stars == 1:  # `git diff *`: the command, then anything (or nothing)
            return Capability(spelling, tool, prefix=pattern[:-1])
        if stars:
            return Capability(spelling, tool, pattern=pattern)
        return Capability(spelling, tool, command=wildcard_parts(pattern)[0])
    if tool == "fetch":
        if pattern.startswith("domain:"):
            return Capability(spelling, tool, domain=pattern[len("domain:"):].strip().lower())
        return f"`{spelling}`: a fetch entry takes `domain:HOST`"
    if tool in ("read", "write", "edit", "glob", "grep"):
        return Capability(spelling, tool, paths=pattern)
    return Capability(spelling, tool)


def parse_allowed(entries: Iterable[str]) -> tuple[tuple[Capability, ...], list[str]]:
    """Entries (each may hold several, space- or comma-separated) → capabilities and problems."""
    caps: list[Capability] = []
    problems: list[str] = []
    for raw in entries:
        for entry in split_allowed(raw):
            cap = parse_capability(entry)
            if isinstance(cap, str):
                problems.append(cap)
            else:
                caps.append(cap)
    return tuple(caps), problems


def allows_tool(caps: Iterable[Capability], tool: str) -> bool:
    """True when some entry names the tool at all (with or without a pattern)."""
    return any(c.tool == tool for c in caps)


def command_allowed(caps: Iterable[Capability], command: str) -> bool:
    """True when a bash command is inside the set: an unrestricted `Bash`, an exact `Bash(cmd)`, a
    `Bash(prefix:*)` whose prefix starts the command as a whole word (`git diff` allows `git diff --stat`,
    not `git difftool`), or a wildcard `Bash(npx *eas-cli@*)` matching the whole command. Shell control
    operators after the prefix (anywhere, for a wildcard) are refused by the runtime separately."""
    for c in caps:
        if c.tool != "bash":
            continue
        if c.unrestricted:
            return True
        if c.command is not None and command.strip() == c.command.strip():
            return True
        if c.pattern is not None and wildcard_regex(c.pattern).fullmatch(command.strip()):
            return True
        if c.prefix is not None:
            p = c.prefix.rstrip()
            stripped = command.lstrip()
            if stripped == p or stripped.startswith(p + " ") or (p.endswith(" ") and stripped.startswith(p)):
                return True
    return False


_PLAIN_EXPANSION = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")
_TWO_CHAR = ("&&", "||", ">>", "<<", "<(", ">(", "&>", ">&", "<&", ">|", ";;", "|&")


def shell_control(command: str, start: int = 0) -> str | None:
    """The first shell control operator, redirection or substitution at or after offset `start` that bash would
    act on (None: none): outside quotes `;` `&` `|` `<` `>` `(` `)` and a newline; outside single quotes
    `` ` ``, `$(` and a `${...}` other than a plain `${NAME}`; an unclosed quote is one too."""
    i, n = 0, len(command)
    quote: str | None = None
    while i < n:
        ch = command[i]
        at = i >= start
        if quote == "'":
            if ch == "'":
                quote = None
            i += 1
            continue
        if ch == "\\":
            i += 2
            continue
        if ch == "`" and at:
            return "`"
        if ch == "$" and command.startswith("$(", i) and at:
            return "$("
        if ch == "$" and command.startswith("${", i) and at:
            m = _PLAIN_EXPANSION.match(command, i)
            if m is None:
                return "${…}"
            i = m.end()
            continue
        if quote == '"':
            if ch == '"':
                quote = None
            i += 1
            continue
        if ch in "'\"":
            quote = ch
        elif ch in ";&|<>()\n\r" and at:
            two = command[i:i + 2]
            return two if two in _TWO_CHAR else ("a newline" if ch in "\n\r" else ch)
        i += 1
    return "an unclosed quote" if quote is not None else None


def refused_control(caps: Iterable[Capability], command: str) -> tuple[str, str] | None:
    """(operator, entry) when the entries that allow a bash command allow it only without the shell control it
    carries: after a `Bash(prefix:*)`'s prefix, or anywhere under a wildcard (a `*` may stand for anything), since
    `git diff; rm -rf /` is not `git diff`. None when an entry allows the command as it is (an unrestricted `Bash`,
    an exact `Bash(cmd)`, or a match without control), or when no entry matches it at all (another refusal)."""
    operator = None
    for c in caps:
        if c.tool != "bash":
            continue
        if c.unrestricted or (c.command is not None and command_allowed((c,), command)):
            return None
        if (c.prefix is not None or c.pattern is not None) and command_allowed((c,), command):
            after = len(command) - len(command.lstrip()) + len(c.prefix.rstrip()) if c.prefix is not None else 0
            found = shell_control(command, after)
            if found is None:
                return None
            operator = operator or (found, c.spelling)
    return operator


def _word_prefix(prefix: str, text: str) -> bool:
    """True when `text` starts with the words of `prefix` followed by a space, so whatever follows is an argument."""
    return text.lstrip().startswith(prefix.strip() + " ")


def _pattern_takes_any_tail(pattern: str, text: str) -> bool:
    """True when the wildcard `pattern` matches `text` followed by anything: it ends with `*`, and what comes
    before that star matches a beginning of `text` (the last `*` then takes the rest)."""
    parts = wildcard_parts(pattern.strip())
    head = re.compile(".*".join(re.escape(p) for p in parts[:-1]), re.S)
    return len(parts) > 1 and parts[-1] == "" and head.match(text.lstrip()) is not None


def _covers(outer: Capability, inner: Capability) -> bool:
    """True when every call `inner` allows is allowed by `outer` (decided conservatively: False when unsure)."""
    if outer.tool != inner.tool or (not outer.known and outer.spelling != inner.spelling):
        return False
    if outer.unrestricted:
        return True
    if inner.unrestricted:
        return False
    if outer.tool == "bash":
        if inner.command is not None:
            return command_allowed((outer,), inner.command)
        if inner.pattern is not None:  # `*` may stand for anything: only the literal head before it is known
            return inner.pattern == outer.pattern or (
                outer.prefix is not None and _word_prefix(outer.prefix, wildcard_parts(inner.pattern)[0]))
        prefix = inner.prefix or ""
        if outer.prefix is not None:
            return _word_prefix(outer.prefix, prefix + " ") or prefix.strip() == outer.prefix.strip()
        return outer.pattern is not None and _pattern_takes_any_tail(outer.pattern, prefix)
    return (inner.paths, inner.domain) == (outer.paths, outer.domain)


#: Tools an `allow` list may add to a skill's allowed-tools without widening what it can do: they change nothing
#: (Claude Code runs reads and searches without asking; the run's places confine them to its two folders).
NEVER_WIDER: Final[frozenset[str]] = frozenset({"read", "glob", "grep", "ask_user"})


def beyond(caps: Iterable[Capability], granted: Iterable[Capability]) -> list[Capability]:
    """The entries of `caps` that allow a call no entry of `granted` allows (`NEVER_WIDER` tools aside)."""
    granted = tuple(granted)
    return [c for c in caps if c.tool not in NEVER_WIDER and not any(_covers(g, c) for g in granted)]


def tool_entries(caps: Iterable[Capability], tool: str) -> list[Capability]:
    """The entries of one tool."""
    return [c for c in caps if c.tool == tool]


# ---------------------------------------------------------------- added by the language and the checker

#: The kits `use tools` can name, and the tools of each.
KITS: Final[dict[str, tuple[str, ...]]] = {"std": KIT_NAMES}

#: The place variables, as `Machine.variables` holds them when a machine names them (and only then).
PLACE_VARIABLES: Final[dict[str, Variable]] = {name: Variable(name, T.STR, "place") for name in PLACES}

#: The argument of each kit tool that names a path (checked against `Read(glob)`-style entries).
PATH_ARGUMENTS: Final[dict[str, str]] = {tool: "path" for tool in ("read", "write", "edit", "glob", "grep")}


def places_in(states: Iterable[State]) -> tuple[str, ...]:
    """The places the states name (in reads, call arguments, guards, assignments and evidence), in PLACES order."""
    found: set[str] = set()
    for st in states:
        found.update(name for name in (*st.reads, *st.requires) if name in PLACES)
        exprs: list[ir.Expr] = [*st.predicates]
        if st.call is not None:
            exprs += [value for _, value in st.call.args]
        for e in st.edges:
            exprs += [e.guard] if e.guard is not None else []
            exprs += [a.value for a in e.assigns]
        found.update(name for x in exprs for name in ir.variables(x) if name in PLACES)
    return tuple(p for p in PLACES if p in found)


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob as a regular expression: `**` crosses folders (`**/` also matches none), `*` and `?` do not."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + "(?:/.*)?", re.S)


def _relative(path: str) -> str:
    """A path as the entries see it: relative to the work folder, without `./` or a leading `/`."""
    path = path.strip()
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/") or "."


def glob_match(pattern: str, path: str) -> bool:
    """True when `path` (relative to the work folder) is inside the glob `pattern` (`docs/**`, `src/*.py`, `notes`):
    what it matches, or anything below a folder it matches."""
    return _glob_regex(_relative(pattern)).fullmatch(_relative(path)) is not None


def path_allowed(caps: Iterable[Capability], tool: str, path: str) -> bool:
    """True when some entry of `tool` allows `path`: an unrestricted one, or one whose glob matches it."""
    return any(c.unrestricted or (c.paths is not None and glob_match(c.paths, path)) for c in tool_entries(caps, tool))


def url_host(url: str) -> str | None:
    """The host of a URL, lowercased (None when it has none)."""
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.lower() if host else None


def url_allowed(caps: Iterable[Capability], url: str) -> bool:
    """True when some fetch entry allows `url`: an unrestricted one, or `domain:HOST` for the URL's host or a
    subdomain of it."""
    host = url_host(url)
    for c in tool_entries(caps, "fetch"):
        if c.unrestricted:
            return True
        if c.domain is not None and host is not None and (host == c.domain or host.endswith("." + c.domain)):
            return True
    return False


__all__ = [
    "HARNESS_NAMES",
    "KIT",
    "KITS",
    "KIT_NAMES",
    "KIT_SOURCE",
    "NEVER_WIDER",
    "PATH_ARGUMENTS",
    "PLACES",
    "PLACE_VARIABLES",
    "READ_ONLY",
    "WORLD_FUNCTIONS",
    "Capability",
    "allows_tool",
    "beyond",
    "command_allowed",
    "glob_match",
    "parse_allowed",
    "parse_capability",
    "path_allowed",
    "places_in",
    "split_allowed",
    "tool_entries",
    "url_allowed",
    "url_host",
    "wildcard_parts",
    "wildcard_regex",
]
