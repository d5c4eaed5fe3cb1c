"""Commands: the text of a shell command a step runs, cut into literal text, typed holes and skill paths.

A command written with placeholders (`git merge <feature-branch>`, `gh pr view {number}`,
`gh run view $RUN_ID`, `open [process]-flowchart.html`) is not shell text to run as it is:
each placeholder is a *hole*, a `str` variable that a model state (or the task) fills, and the
tool state builds the command with `quote(hole)` so that no value becomes shell code. A bundled
script (`python scripts/x.py`, `node <skill-dir>/scripts/fetch.js`) runs from the skill's folder:
its path is `quote(skill_dir ++ "/scripts/x.py")`. `$ARGUMENTS` is the task.

Pure functions of text; `graph` makes the states.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import attrs

from skillc.frontends.markdown.names import slug
from skillc.frontends.markdown.phrases import INTERPRETERS, SAMPLE_NAMES

# Part of a tool state's argument: text, a variable as it is ("var"), quoted for the shell ("quote"),
# or a path inside the skill's folder, quoted ("path": `quote(skill_dir ++ "/" ++ PATH)`) or as it is for a
# tool that takes a path ("file": `skill_dir ++ "/" ++ PATH`).
Part = str | tuple[Literal["var", "quote", "path", "file"], str]

# A placeholder that stands for the skill's own folder.
_SKILL_DIR = re.compile(r"^(?:<[^<>]*skill[^<>]*(?:dir|folder|root|base|home|path)[^<>]*>|"
                        r"<[^<>]*(?:dir|folder|root|base)[^<>]*skill[^<>]*>|\{[^{}]*(?:skill|base)[^{}]*\}|"
                        r"\$\{?\w*(?:SKILL|PLUGIN)\w*\}?)$", re.I)
# Environment variables a command may use as they are: the shell's own, credentials and homes.
_ENVIRONMENT = re.compile(r"^(?:HOME|PATH|USER|PWD|OLDPWD|SHELL|TMPDIR|TERM|LANG|LC_\w+|HOSTNAME|EDITOR|VISUAL|CI|"
                          r"GITHUB_\w+|RUNNER_\w+|XDG_\w+|\w+_(?:KEY|TOKEN|SECRET|PASSWORD|HOME|PATH|URL|HOST|PORT))$")
_HOLE = re.compile(
    r"(?P<script>(?<![\w.-])(?:[^\s`'\"()<>]*/|<[^<>\s]*>/|\{[^{}\s]*\}/|\$\{?\w+\}?/)?scripts/[\w.-]+"
    r"\.(?:py|sh|bash|js|mjs|cjs|ts|rb))(?![\w/-])"
    r"|(?P<angle>(?<![<A-Za-z0-9])<(?P<angle_name>[A-Za-z][\w./:@-]*(?: [A-Za-z][\w./-]*){0,4})>(?!>))"
    r"|(?P<brace>(?<![$A-Za-z0-9{])\{(?P<brace_name>[A-Za-z_][\w-]*)\}(?!\}))"
    r"|(?P<dollar>\$(?:\{(?P<dollar_braced>[A-Z][A-Z0-9_]*)\}|(?P<dollar_name>[A-Z][A-Z0-9_]*)\b))"
    r"|(?P<square>(?<![\w\[$])\[(?P<square_name>[a-z][\w-]{2,})\](?![\w(\]]))")


# A script fed to bash (or sh) through a here-document whose delimiter is quoted (`/usr/bin/env bash << 'EOF'` …
# `EOF`), with no option that changes how it runs: the shell reads the body as it is, so the body is the command (and
# its holes are quoted as shell code, not as the text of a here-document, where quoting would not hold).
_SHELL_HEREDOC = re.compile(r"\A\s*(?:(?:/usr)?/bin/env[ \t]+)?(?:/(?:usr/)?(?:local/)?bin/)?(?:ba)?sh(?:[ \t]+-s)?"
                            r"[ \t]*<<(?P<dash>-?)[ \t]*(?P<q>['\"])(?P<delim>\w+)(?P=q)[ \t]*\n"
                            r"(?P<body>.*)\n(?P<indent>\t*)(?P=delim)[ \t]*\n?\Z", re.S)


def _fed_script(command: str) -> str | None:
    """The body of a script fed to the shell through a quoted here-document, or None (not one, or one whose body
    holds its delimiter line, which would end it earlier than the text shows)."""
    fed = _SHELL_HEREDOC.match(command)
    if fed is None or (fed.group("indent") and not fed.group("dash")):
        return None
    lines = fed.group("body").split("\n")
    if fed.group("dash"):
        lines = [line.lstrip("\t") for line in lines]
    if any(line.rstrip(" \t") == fed.group("delim") for line in lines):
        return None
    return "\n".join(lines)


# An optional argument of a usage line: ` [--flag VALUE]` (not `[ -f x ]`, `[[ … ]]`).
_OPTIONAL = re.compile(r"[ \t]+(?<!\[)\[-[^\[\]\n]*\](?!\])")

# Names a hole cannot take: expression keywords, the places and the task.
_RESERVED = frozenset({"true", "false", "none", "not", "and", "or", "in", "skill_dir", "task", "quote", "str", "int",
                       "float", "bool", "list", "map", "enum"})


@attrs.frozen
class Hole:
    """A placeholder of a command: as written, and the variable name it suggests."""

    text: str
    name: str


@attrs.frozen
class Cut:
    """A command cut into parts, with the holes a model must fill."""

    parts: tuple[Part, ...]
    holes: tuple[Hole, ...]

    @property
    def literal(self) -> bool:
        """No hole and no skill path: the command runs as written."""
        return all(isinstance(p, str) for p in self.parts)


def _assigned(command: str) -> set[str]:
    """Shell variables the command sets itself (`X=…`, `export X`, `for X in`, `read X`)."""
    names = set(re.findall(r"(?:^|[\s;&|(])([A-Za-z_]\w*)=", command))
    names |= set(re.findall(r"\b(?:export|local|readonly|declare(?: -\w+)?|read(?: -\w+)*|for)\s+([A-Za-z_]\w*)",
                            command))
    return names


def _quote_state(text: str, upto: int, state: str = "") -> str:
    """The shell quoting in force at `upto` ('', '"' or "'"), scanning from a known state."""
    i = 0
    while i < upto:
        ch = text[i]
        if state == "'":
            if ch == "'":
                state = ""
        elif ch == "\\":
            i += 1
        elif state == '"':
            if ch == '"':
                state = ""
        elif ch in "'\"":
            state = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t\n"):  # a comment runs to the end of its line
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        i += 1
    return state


def _in_comment(text: str, at: int) -> bool:
    """Position `at` is inside a `#` comment (a whole-line one, or after code, outside quotes)."""
    line_start = text.rfind("\n", 0, at) + 1
    line = text[line_start:at]
    if line.lstrip().startswith("#"):
        return True
    return re.search(r"(?:^|\s)#", line) is not None and _quote_state(line, len(line)) == ""


def cut(command: str, scripts: frozenset[str] = frozenset()) -> Cut:
    """The command as parts: literal text, holes quoted for the shell, bundled scripts run from the skill's folder.

    `scripts` are the paths of the skill folder's files (`scripts/x.py`); a script path whose
    file is there, or written after a placeholder of the skill's folder, runs from `skill_dir`.
    Optional arguments shown in brackets (`[--backup]`, `[--pr NUMBER]`) are left out: a usage
    line's brackets are not the shell's. A script fed to a shell through a quoted here-document is its body.
    """
    command = _fed_script(command) or command
    command = _OPTIONAL.sub(lambda m: "" if _quote_state(command, m.start()) == "" else m.group(0), command)
    parts: list[Part] = []
    holes: dict[str, Hole] = {}
    own = _assigned(command)
    pos = 0
    text = ""

    def emit(part: Part, start: int, end: int) -> None:
        nonlocal text, pos
        quoting = _quote_state(command, start)
        before = command[pos:start]
        wrapped = quoting and start > 0 and command[start - 1] == quoting and command[end:end + 1] == quoting
        if wrapped:  # the placeholder is the whole quoted word: the quotes go, quote() puts its own
            before = before[:-1]
            end += 1
        elif quoting:  # inside a quoted word: close the quotes around the value, then open them again
            before += quoting
        text += before
        if text:
            parts.append(text)
        parts.append(part)
        text = quoting if quoting and not wrapped else ""
        pos = end

    for m in _HOLE.finditer(command):
        if _in_comment(command, m.start()):
            continue
        if m.group("script"):
            path = m.group("script")
            prefix, _, rest = path.rpartition("scripts/")
            relative = "scripts/" + rest
            if relative in scripts or (prefix and _SKILL_DIR.match(prefix.rstrip("/"))):
                emit(("path", relative), m.start(), m.end())
            continue
        whole = m.group(0)
        if _SKILL_DIR.match(whole) and not any(isinstance(p, tuple) and p[0] == "path" and p[1] for p in parts):
            emit(("path", ""), m.start(), m.end())  # an argument of a bundled script names the skill it works on
            continue
        name = m.group("angle_name") or m.group("brace_name") or m.group("dollar_braced") or m.group("dollar_name") \
            or m.group("square_name")
        if m.group("brace") and _quote_state(command, m.start()) == "'":
            continue  # `awk '{print}'`, `jq '{name}'`: code, not a placeholder
        if m.group("dollar"):
            if name == "ARGUMENTS" or name == "ARGS":
                emit(("quote", "task"), m.start(), m.end())
                continue
            if name in own or _ENVIRONMENT.match(name):
                continue
        if m.group("square") and re.fullmatch(r"\w-\w", name):
            continue  # a character class `[a-z]`
        base = slug(name.lower(), 4, "value")
        if base in ("workdir", "work_dir", "working_dir", "cwd"):
            emit(("quote", "workdir"), m.start(), m.end())  # the run's work folder: a place, not a hole
            continue
        if base in _RESERVED:
            base += "_value"
        hole = holes.setdefault(whole, Hole(whole, base))
        emit(("quote", hole.name), m.start(), m.end())
    text += command[pos:]
    if text:
        parts.append(text)
    return Cut(tuple(parts), tuple(holes.values()))


def alternatives(text: str) -> str | None:
    """A fence of sample invocations of one program, each under its own comment ("# Generate a new image" /
    "# Edit an existing image") or with sample names (`pytest tests/path/to/test_x.py`, `pytest -k "pattern"`): the
    first, as a template whose quoted sample values and sample paths are holes; else None."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    comments = [ln for ln in lines if ln.startswith("#")]
    commands = [ln for ln in lines if not ln.startswith("#")]
    if len(commands) < 2 or (len(comments) < 2 and not SAMPLE_NAMES.search(text)):
        return None
    heads = {tuple(c.split()[:2]) for c in commands}
    if len(heads) != 1:
        return None
    first = re.sub(r'"[^"$`]*\s[^"$`]*"', "<argument>", commands[0])
    return _SAMPLE_PATH.sub(lambda m: f"<{slug(m.group(1), 2, 'path')}>", first)


# A sample path of a command (`tests/path/to/test_file.py`): group 1 names what goes there.
_SAMPLE_PATH = re.compile(r"(?<![\w<])(?:[\w.-]+/)*path/to/((?:[\w.-]+/)*[\w.-]+)")


def skill_files(folder: str) -> frozenset[str]:
    """The paths of a skill folder's bundled scripts, relative to it (`scripts/x.py`)."""
    root = Path(folder)
    base = root / "scripts"
    if not base.is_dir():
        return frozenset()
    return frozenset(p.relative_to(root).as_posix() for p in base.rglob("*") if p.is_file())


def skill_documents(folder: str) -> tuple[str, ...]:
    """The text files a skill folder bundles besides SKILL.md and its scripts (references, templates), longest first."""
    root = Path(folder)
    if not (root / "SKILL.md").is_file():
        return ()
    found: list[str] = []
    for p in root.rglob("*"):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and p.suffix.lower() in (".md", ".txt", ".json", ".yaml", ".yml", ".html", ".csv") \
                and rel not in ("SKILL.md", "README.md", "LICENSE.md") and not rel.startswith("scripts/") \
                and "/" in rel and len(found) < 200:
            found.append(rel)
    return tuple(sorted(found, key=len, reverse=True))


def script_command(path: str, args: str = "") -> str:
    """The command that runs a bundled script mentioned in prose: its interpreter, the script, its arguments."""
    interpreter = INTERPRETERS.get(path.rsplit(".", 1)[-1], "")
    return f"{interpreter} {path}{(' ' + args) if args else ''}".strip()


__all__ = ["Cut", "Hole", "Part", "alternatives", "cut", "script_command", "skill_files"]
