"""The skill folder as the LLM compiler's request shows it: front matter, files, scripts' usage, references.

A skill is a folder: `SKILL.md` plus bundled `scripts/`, `references/` and `assets/`. Nothing here runs a
script: a Python script's usage is read with `ast` (the module docstring, `ArgumentParser(description=…)`,
each `add_argument(…)` with its options and help, click's `@click.option`/`@click.argument`, a `usage:`
line), a shell or JavaScript script's from its leading comment block and its `usage:` text. A reference is
named by its first heading.

`read_folder(skill_md, front)` collects it; `describe(folder)` is the request's section about it.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import Final, TypeVar

import attrs

from skillc.diagnostics import Diagnostic, make
from skillc.frontends.markdown import codes
from skillc.frontends.markdown.clauses import shorten
from skillc.frontends.markdown.document import FrontMatter
from skillc.ir.machine import Machine
from skillc.ir.toolkit import Capability, beyond, parse_allowed

#: Files a script is recognised by (anywhere in the folder), as the corpus index counts them.
SCRIPT_SUFFIXES: Final = (".py", ".sh", ".bash", ".js", ".cjs", ".mjs", ".ts", ".rb")
#: Markdown files that are about the skill, not knowledge for its states.
NOT_REFERENCES: Final = frozenset({"skill.md", "readme.md", "spec.md", "eval.md", "sources.md", "changelog.md"})
#: Never listed: version control, caches, the corpus' own bookkeeping.
SKIPPED: Final = frozenset({".git", "__pycache__", ".DS_Store", "node_modules", ".venv"})
MAX_FILES: Final = 200
#: Bundled scripts and references the request describes (a folder that vendors a package or a documentation set
#: holds hundreds): those SKILL.md names first, then the shallowest; the rest are counted.
MAX_SCRIPTS: Final = 40
MAX_REFERENCES: Final = 60
MAX_USAGE_LINES: Final = 24
MAX_SCRIPT_BYTES: Final = 512 * 1024


@attrs.frozen
class Script:
    """A bundled script and what it says about how to call it (read statically, never run)."""

    path: str  # relative to the skill folder, `/`-separated
    interpreter: str  # how to run it: python3, bash, node, ruby, or "" when unknown
    usage: str


@attrs.frozen
class Reference:
    """A bundled reference document and its title (first heading)."""

    path: str
    title: str
    lines: int


_Item = TypeVar("_Item", Script, Reference)


@attrs.frozen
class Folder:
    """What the request says about a skill's folder."""

    root: Path
    files: tuple[str, ...]
    scripts: tuple[Script, ...]
    references: tuple[Reference, ...]
    front: FrontMatter
    capabilities: tuple[Capability, ...] = ()
    problems: tuple[str, ...] = ()  # allowed-tools entries that are not tool names
    more_files: int = 0  # files left out of `files` beyond MAX_FILES
    #: The files SKILL.md names (by path or file name): described first when there are too many to describe all.
    mentioned: frozenset[str] = frozenset()


def _walk(root: Path) -> list[str]:
    out: list[str] = []
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.startswith("."))
        for name in sorted(files):
            if name in SKIPPED or name.startswith("."):
                continue
            out.append(Path(here, name).relative_to(root).as_posix())
    return sorted(out)


def _read(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_SCRIPT_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _interpreter(path: str, text: str) -> str:
    first = text.split("\n", 1)[0]
    if first.startswith("#!"):
        for word, name in (("python", "python3"), ("bash", "bash"), ("sh", "bash"), ("node", "node"),
                           ("ruby", "ruby"), ("deno", "deno"), ("bun", "bun")):
            if re.search(rf"\b{word}\d*\b", first):
                return name
    return {".py": "python3", ".sh": "bash", ".bash": "bash", ".js": "node", ".cjs": "node", ".mjs": "node",
            ".rb": "ruby", ".ts": "npx tsx"}.get(Path(path).suffix, "")


def _literal(node: ast.AST | None) -> object:
    try:
        return ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _argparse(tree: ast.Module) -> list[str]:
    """`prog [options]` lines from argparse and click calls, in source order."""
    lines: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        kwargs = {k.arg: k.value for k in node.keywords if k.arg}
        if name == "ArgumentParser":
            description = _literal(kwargs.get("description"))
            if isinstance(description, str) and description.strip():
                lines.append(f"description: {shorten(description, 160)}")
        elif name in ("add_argument", "option", "argument"):
            flags = [a for a in (_literal(x) for x in node.args) if isinstance(a, str)]
            if not flags:
                continue
            parts = [" / ".join(flags)]
            action = _literal(kwargs.get("action"))
            if (isinstance(action, str) and action.startswith("store_")) \
                    or isinstance(_literal(kwargs.get("is_flag")), bool):
                parts.append("(flag)")
            choices = _literal(kwargs.get("choices"))
            if isinstance(choices, (list, tuple)) and choices:
                parts.append("{" + ",".join(str(c) for c in choices) + "}")
            if _literal(kwargs.get("required")) is True:
                parts.append("(required)")
            default = _literal(kwargs.get("default"))
            if default is not None and not isinstance(default, bool):
                parts.append(f"(default {default!r})")
            helptext = _literal(kwargs.get("help"))
            if isinstance(helptext, str) and helptext.strip():
                parts.append(f"— {shorten(helptext, 120)}")
            lines.append("  " + " ".join(parts))
    # ast.walk is breadth-first; keep the source order of the arguments
    return lines


def _usage_block(text: str) -> list[str]:
    """A `usage:` line and the lines after it: to the end of its here-document, else the indented or comment
    lines that continue it."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.search(r"(?i)\busage:\s*\S.*", line)
        if m is None:
            continue
        heredoc = next((h.group(1) for x in lines[max(0, i - 3):i + 1]
                        if (h := re.search(r"<<-?\s*['\"]?(\w+)['\"]?", x))), None)
        out = [m.group(0).rstrip().rstrip("\"');,").rstrip()]
        for nxt in lines[i + 1:i + MAX_USAGE_LINES]:
            if heredoc is not None:
                if nxt.strip() == heredoc:
                    break
                out.append(nxt.rstrip())
            elif nxt.strip().startswith(("#", "//")) and nxt.strip().lstrip("#/").strip():
                out.append(nxt.strip().lstrip("#/").rstrip())
            else:
                break
        while out and not out[-1].strip():
            out.pop()
        return out
    return []


def _python_usage(text: str) -> list[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _usage_block(text)
    out: list[str] = []
    doc = ast.get_docstring(tree)
    if doc:
        out += [x.rstrip() for x in doc.strip().splitlines()][:MAX_USAGE_LINES]
    args = sorted(_argparse(tree), key=lambda x: not x.startswith("description:"))
    if args:
        out += [x for x in args if x not in out]
    if not doc:
        out += [x for x in _usage_block(text) if x not in out]
    return out


def _comment_usage(text: str) -> list[str]:
    """The leading comment block (after a shebang) of a shell, JavaScript or Ruby script, and its usage text."""
    out: list[str] = []
    lines = text.splitlines()
    i = 1 if lines and lines[0].startswith("#!") else 0
    in_block = False
    for line in lines[i:]:
        s = line.strip()
        if in_block:
            out.append(s.rstrip("*/").lstrip("* ").rstrip())
            if s.endswith("*/"):
                break
            continue
        if s.startswith("/*"):
            in_block = True
            out.append(s.lstrip("/*").strip())
            if s.endswith("*/"):
                out[-1] = out[-1].rstrip("*/").strip()
                break
            continue
        if s.startswith(("#", "//")) and not s.startswith("#!"):
            out.append(s.lstrip("#/").strip())
            continue
        if not s and not out:
            continue
        break
    out = [x for x in out if x][:MAX_USAGE_LINES]
    usage = _usage_block(text)
    return out + [x for x in usage if x not in out]


def script_usage(path: Path) -> Script | None:
    """What a script says about how to call it; None when it cannot be read as text."""
    text = _read(path)
    if text is None:
        return None
    rel = path.name
    lines = _python_usage(text) if path.suffix == ".py" else _comment_usage(text)
    return Script(rel, _interpreter(rel, text), "\n".join(lines[:MAX_USAGE_LINES * 2]).strip())


def reference_title(path: Path) -> tuple[str, int]:
    """A reference's first heading (or first line) and its length in lines."""
    text = _read(path) or ""
    lines = text.splitlines()
    body = lines
    if lines and lines[0].strip() == "---":  # YAML front matter
        end = next((i for i, x in enumerate(lines[1:], 1) if x.strip() == "---"), 0)
        body = lines[end + 1:]
    title = next((x.lstrip("#").strip() for x in body if x.startswith("#")), None)
    if title is None:
        title = next((x.strip() for x in body if x.strip()), "")
    return shorten(title, 120), len(lines)


def read_folder(skill_md: Path, front: FrontMatter) -> Folder:
    """The folder holding `skill_md`: its files, scripts, references and the capability set of its front matter."""
    root = skill_md.resolve().parent
    files = _walk(root) if root.is_dir() else [skill_md.name]
    scripts: list[Script] = []
    references: list[Reference] = []
    for rel in files:
        path = root / rel
        if path.suffix.lower() in SCRIPT_SUFFIXES:
            if re.match(r"(test_.*|.*_test)\.\w+$", path.name) or "tests" in Path(rel).parts[:-1]:
                continue  # the script's own tests: listed with the files, not a tool of the skill
            found = script_usage(path)
            if found is not None:
                scripts.append(attrs.evolve(found, path=rel))
        elif path.suffix.lower() == ".md" and path.name.lower() not in NOT_REFERENCES:
            title, count = reference_title(path)
            references.append(Reference(rel, title, count))
    raw = front.raw.get("allowed-tools")  # the front matter as written: `Bash(gh pr checks:*)` is one entry
    entries = [raw] if isinstance(raw, str) else [str(x) for x in raw] if isinstance(raw, list) else \
        list(front.allowed_tools)
    caps, problems = parse_allowed(entries)
    text = _read(skill_md) or ""
    mentioned = frozenset(rel for rel in files if rel in text or (rel.rsplit("/", 1)[-1] in text and "." in rel))
    return Folder(root, tuple(files[:MAX_FILES]), tuple(scripts), tuple(references), front, caps, tuple(problems),
                  max(0, len(files) - MAX_FILES), mentioned)


def _first(items: tuple[_Item, ...], limit: int, mentioned: frozenset[str]) -> tuple[list[_Item], int]:
    """At most `limit` items in their order, those SKILL.md names and then the shallowest kept; and how many are not."""
    if len(items) <= limit:
        return list(items), 0
    keep = {i.path for i in sorted(items, key=lambda i: (i.path not in mentioned, i.path.count("/"), i.path))[:limit]}
    return [i for i in items if i.path in keep], len(items) - limit


def _front(front: FrontMatter) -> list[str]:
    out = []
    for key, value in front.raw.items():
        if key in ("name", "description", "allowed-tools"):
            continue
        out.append(f"- {key}: {shorten(str(value), 200)}")
    return out


def allow_line(folder: Folder) -> str:
    """What `allowed-tools` becomes: the machine's `allow` and the kit tools it names."""
    if not folder.front.allowed_tools:
        return ("The front matter has no `allowed-tools`: the machine may leave `allow` out, or state the "
                "capabilities its tool states need.")
    entries = ", ".join(f'"{c.spelling}"' for c in folder.capabilities)
    kit = sorted({c.tool for c in folder.capabilities if c.known})
    unknown = sorted({c.spelling for c in folder.capabilities if not c.known})
    line = f"`allowed-tools` becomes `allow {entries}`" + (f"; kit tools: {', '.join(kit)}" if kit else "") + "."
    line += (' "Read", "Glob", "Grep" and "AskUserQuestion" may be added to `allow` when the machine reads the '
             "skill's files or asks the user: they never widen what the skill allows.")
    if unknown:
        line += (f" No skillc implementation: {', '.join(unknown)} (their steps stay model states, or ask the "
                 "user through `ask_user`).")
    if folder.problems:
        line += " Not tool entries: " + "; ".join(folder.problems) + "."
    return line


def describe(folder: Folder) -> str:
    """The request's section about the folder."""
    out = [f"Skill folder `{folder.root.name}/` (compile unit; `skill_dir` at run time, read-only).",
           f"Front matter: name {folder.front.name or '(none)'}; {allow_line(folder)}"]
    out += _front(folder.front)
    listing = "\n".join(f"- {f}" for f in folder.files)
    if folder.more_files:
        listing += f"\n- … and {folder.more_files} more files"
    out.append(f"Files:\n{listing}")
    scripts, more_scripts = _first(folder.scripts, MAX_SCRIPTS, folder.mentioned)
    if scripts:
        parts = []
        for s in scripts:
            run = f'{s.interpreter} " ++ quote(skill_dir ++ "/{s.path}")' if s.interpreter else \
                f'quote(skill_dir ++ "/{s.path}")'
            usage = "\n".join(f"    {x}" for x in s.usage.splitlines()) if s.usage else "    (no usage text found)"
            parts.append(f"- {s.path} — run as `\"{run} ++ …`; its usage (read from the file, not run):\n{usage}")
        if more_scripts:
            parts.append(f"- … and {more_scripts} more scripts, not described here")
        out.append("Bundled scripts:\n" + "\n".join(parts))
    references, more_references = _first(folder.references, MAX_REFERENCES, folder.mentioned)
    if references:
        listed = [f"- {r.path}: \"{r.title}\" ({r.lines} lines)" for r in references]
        if more_references:
            listed.append(f"- … and {more_references} more markdown files, not described here")
        out.append("References (load each with a `read` tool state into the states that need it):\n"
                   + "\n".join(listed))
    return "\n\n".join(out)


__all__ = ["Folder", "Reference", "Script", "describe", "read_folder", "reference_title", "script_usage"]


def wider_allow(machine: Machine, folder: Folder) -> list[Diagnostic]:
    """SKM347 when the machine allows more than the front matter's `allowed-tools` (none: no finding)."""
    if not folder.front.allowed_tools or not folder.capabilities:
        return []
    granted = ", ".join(c.spelling for c in folder.capabilities)
    span = machine.allow_spans[0] if machine.allow_spans else machine.span
    if not machine.allowed:
        return [make(codes.ALLOW_WIDER_THAN_SKILL, f"the machine has no `allow`, so it allows every tool it takes; "
                     f"the skill allows only {granted}", span, label="no `allow`",
                     hint=f"add `allow` with the front matter's entries: {granted}")]
    extra = beyond(machine.allowed, folder.capabilities)
    if not extra:
        return []
    return [make(codes.ALLOW_WIDER_THAN_SKILL, f"`allow` grants {', '.join(c.spelling for c in extra)}, which the "
                 f"skill's allowed-tools ({granted}) does not", span, label="wider than the skill",
                 hint="keep `allow` within the front matter's entries (narrower is fine)")]
