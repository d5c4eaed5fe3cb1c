"""Rewrite diagnostic code strings at their call sites into the stages' `Code` constants (issue #13, item 2).

    python tools/codemod_codes.py [--check] [--strict-make] [PATH ...]     (default PATH: skillc)

What it rewrites, in every `.py` file under PATH (the code tables, `skillc/registry.py` and
`skillc/diagnostics/code.py` excepted):

- the code argument of `make(...)` (the first positional one, or `code=`), where `make` is the one
  imported from `skillc.diagnostics` — also inside `a if cond else b`, and in multi-line calls;
- the arguments of the helpers that forward a code to `make` unchanged, named in `FORWARDERS`
  (`self._error("SKM109", ...)` in `ir/exprs.py`, `Remap("SKM621", "SKM622", ...)` in the importers), and
  the `code="SKM401"` keyword of those in `KEYWORD_FORWARDERS` (`read_bytes(path, code="SKM401")`);
  `Diagnostic(code="SKM103")` is data and stays;
- the annotation `code: str` of a parameter that such a function passes straight to `make(code, ...)`,
  and the `str` fields named in `CODE_FIELDS` (`Remap.unbounded`), become `Code` (and `Code` is imported
  for them), so the types follow the values.

`"SKM103"` becomes `<alias>.UNDEFINED_VARIABLE`, the constant named after the code's slug in the
table of its stage (found through `skillc.registry`), and the file gets
`from skillc.<stage> import codes as <alias>`: `codes` for the file's own stage (or the only table it
uses) unless the name `codes` is already used for something else, `<stage>_codes` otherwise. Strings
that are data — comparisons (`d.code == "SKM103"`), sets and dicts of codes, docstrings — are left
alone. The rewrite is textual (only the literal's characters change), so comments and layout stay.

It is idempotent (a second run changes nothing) and prints each change as `path:line: "SKMnnn" -> alias.NAME`,
and `LONG LINE` for each rewritten line now longer than 120 columns (it does not rewrap).
`--check` prints what it would change and exits 1 when something would; nothing is written.
`--strict-make` also makes `make()` take a `Code` only (the string lookup in `diagnostics/diagnostic.py`
goes); run it once no call site passes a string (see the report of issue #13 for the sites that
pass a variable).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs

CODE = re.compile(r"SKM\d{3}")
FORWARDERS = {"_error": (0,), "Remap": (0, 1), "problem": (0,)}  # helpers whose arguments at these positions become make()'s code
# attrs classes whose fields of these names hold a code given to make() (their `str` annotations become `Code`)
CODE_FIELDS = {"Remap": ("unbounded", "unset"), "Problem": ("code",)}
# Edits that follow from the rewrite where a code travels as data before it reaches make() (old -> new, per file).
# One that no longer matches is reported, not guessed: the lead applies it by hand.
FIXUPS = {
    "skillc/frontends/markdown/__init__.py": [
        ("doc.span(start, end), hint=hints[code]))", "doc.span(start, end), hint=hints[code.code]))"),
    ],
    "skillc/frontends/markdown/structural.py": [
        ("problems: tuple[tuple[str, str, int, int], ...] = ()", "problems: tuple[tuple[Code, str, int, int], ...] = ()"),
    ],
}
KEYWORD_FORWARDERS = {"read_bytes"}  # helpers whose `code=` keyword is passed to make() unchanged
SKIP = {"skillc/registry.py", "skillc/diagnostics/code.py"}
MAX_LINE = 120  # ruff's line-length in pyproject.toml: a rewritten line past it is reported
DIAGNOSTICS = {"skillc.diagnostics", "skillc.diagnostics.diagnostic"}


@attrs.frozen
class Table:
    """A stage's code table: its module, the alias stem for foreign use, and its constants by code."""

    module: str  # skillc.check.codes
    stem: str  # check (-> check_codes)
    names: dict[str, str]  # SKM240 -> DEAD_GUARD


def load_tables() -> dict[str, Table]:
    """Every code -> the table it is declared in (read from skillc.registry)."""
    from skillc import registry

    out: dict[str, Table] = {}
    for module in registry.TABLES:
        names = {value.code: name for name, value in vars(module).items()
                 if type(value).__name__ == "Code" and name.isupper()}
        parts = module.__name__.split(".")
        table = Table(module.__name__, parts[-2], names)
        for code in names:
            out[code] = table
    return out


@attrs.frozen
class Edit:
    start: int  # offsets into the file's text
    end: int
    text: str
    line: int
    old: str


def _offsets(text: str) -> list[int]:
    """The character offset at which each line starts (ast gives UTF-8 byte columns)."""
    starts, pos = [0], 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


def _char(text_lines: list[str], starts: list[int], line: int, byte_col: int) -> int:
    return starts[line - 1] + len(text_lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8"))


def _literals(node: ast.expr) -> Iterator[ast.Constant]:
    """The code literals an argument consists of: the literal itself, or both branches of `a if c else b`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.fullmatch(node.value):
        yield node
    elif isinstance(node, ast.IfExp):
        yield from _literals(node.body)
        yield from _literals(node.orelse)


def _make_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names bound to skillc.diagnostics' `make`, and names bound to the diagnostics package itself."""
    funcs, modules = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in DIAGNOSTICS:
            funcs |= {a.asname or a.name for a in node.names if a.name == "make"}
        elif isinstance(node, ast.ImportFrom) and node.module == "skillc":
            modules |= {a.asname or a.name for a in node.names if a.name == "diagnostics"}
        elif isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name in DIAGNOSTICS and a.asname}
    return funcs, modules


def _code_arguments(tree: ast.Module) -> Iterator[ast.expr]:
    """Every argument expression that is a diagnostic code passed towards make()."""
    funcs, modules = _make_names(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        is_make = (isinstance(f, ast.Name) and f.id in funcs) or (
            isinstance(f, ast.Attribute) and f.attr == "make" and isinstance(f.value, ast.Name) and f.value.id in modules)
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        positions = (0,) if is_make else FORWARDERS.get(name, ())
        for position in positions:
            if len(node.args) > position:
                yield node.args[position]
        if is_make or name in FORWARDERS or name in KEYWORD_FORWARDERS:
            for kw in node.keywords:
                if kw.arg == "code" or kw.arg in CODE_FIELDS.get(name, ()):
                    yield kw.value


def _forwarding_params(tree: ast.Module) -> Iterator[ast.arg]:
    """`code: str` parameters of functions that pass `code` as make()'s code argument."""
    funcs, _ = _make_names(tree)
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = {a.arg: a for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
        if fn.name in FORWARDERS and "code" in params:  # a forwarder's code parameter
            arg = params["code"]
            if isinstance(arg.annotation, ast.Name) and arg.annotation.id == "str":
                yield arg
            continue
        for node in ast.walk(fn):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in funcs
                    and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in params):
                arg = params[node.args[0].id]
                if isinstance(arg.annotation, ast.Name) and arg.annotation.id == "str":
                    yield arg


def _code_fields(tree: ast.Module) -> Iterator[ast.AnnAssign]:
    """`unbounded: str` fields of the classes in CODE_FIELDS."""
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef) and cls.name in CODE_FIELDS:
            for item in cls.body:
                if (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                        and item.target.id in CODE_FIELDS[cls.name]
                        and isinstance(item.annotation, ast.Name) and item.annotation.id == "str"):
                    yield item


def _own_stage(rel: str) -> str:
    """The stem of the table a file's own package declares (skillc/check/x.py -> check)."""
    parts = rel.split("/")
    if len(parts) >= 3 and parts[1] == "frontends":
        return parts[2]
    return parts[1] if len(parts) >= 3 else ""


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name the module binds or uses (so an alias can avoid them)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _existing_aliases(tree: ast.Module) -> dict[str, str]:
    """Table module -> the alias the file already imports it under (`from skillc.check import codes`)."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                if a.name == "codes":
                    out[f"{node.module}.codes"] = a.asname or "codes"
    return out


def _has_code_import(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.ImportFrom) and n.module in ("skillc.diagnostics", "skillc.diagnostics.code",
                                                              "skillc.diagnostics.codes")
               and any((a.asname or a.name) == "Code" for a in n.names) for n in tree.body)


def rewrite(text: str, rel: str, tables: dict[str, Table]) -> tuple[str, list[str]]:
    """The file's new text and a line per change."""
    tree = ast.parse(text)
    found = [lit for arg in _code_arguments(tree) for lit in _literals(arg)]
    params_all = [p.annotation for p in _forwarding_params(tree)] + [f.annotation for f in _code_fields(tree)]
    fixups = [(old, new) for old, new in FIXUPS.get(rel, []) if new not in text]
    if not found and not params_all and not fixups:
        return text, []
    used = {tables[lit.value].module for lit in found if lit.value in tables}
    existing = _existing_aliases(tree)
    taken = _bound_names(tree)
    own = _own_stage(rel)
    aliases: dict[str, str] = {}
    for module in sorted(used):
        if module in existing:
            aliases[module] = existing[module]
            continue
        stem = module.split(".")[-2]
        own_table = module.rsplit(".", 1)[0] == rel.rsplit("/", 1)[0].replace("/", ".")
        # In a package's __init__.py the name `codes` is its own codes.py submodule: never bind it to another table.
        package_init = rel.endswith("/__init__.py")
        bare = own_table if package_init else (stem == own or len(used) == 1)
        preferred = "codes" if bare else f"{stem}_codes"
        if preferred in taken or preferred in aliases.values():
            preferred = f"{stem}_codes"
        while preferred in taken or preferred in aliases.values():
            preferred = "_" + preferred
        aliases[module] = preferred
    lines = text.splitlines(keepends=True)
    starts = _offsets(text)
    edits: list[Edit] = []
    for lit in found:
        if lit.value not in tables:
            raise SystemExit(f"{rel}:{lit.lineno}: {lit.value} is in no table of skillc.registry")
        table = tables[lit.value]
        new = f"{aliases[table.module]}.{table.names[lit.value]}"
        start = _char(lines, starts, lit.lineno, lit.col_offset)
        end = _char(lines, starts, lit.end_lineno or lit.lineno, lit.end_col_offset or 0)
        edits.append(Edit(start, end, new, lit.lineno, text[start:end]))
    for ann in params_all:
        assert ann is not None
        start = _char(lines, starts, ann.lineno, ann.col_offset)
        end = _char(lines, starts, ann.end_lineno or ann.lineno, ann.end_col_offset or 0)
        edits.append(Edit(start, end, "Code", ann.lineno, "str"))
    out = text
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        out = out[:e.start] + e.text + out[e.end:]
    notes = []
    for old, new in fixups:
        if old in out:
            out = out.replace(old, new)
            notes.append(f"{rel}: {old} -> {new}")
        else:
            notes.append(f"{rel}: FIXUP NOT APPLIED (text not found), edit by hand: {old} -> {new}")
    imports = [(m.rsplit(".", 1)[0], "codes", a) for m, a in sorted(aliases.items()) if m not in existing]
    if (params_all or any("Code" in new for _, new in fixups)) and not _has_code_import(tree):
        imports.append(("skillc.diagnostics", "Code", "Code"))
    out = _add_imports(out, imports)
    report = [f"{rel}:{e.line}: {e.old} -> {e.text}" for e in sorted(edits, key=lambda e: e.start)]
    report += notes + [f"{rel}: + from {m} import {n}" + ("" if a == n else f" as {a}") for m, n, a in imports]
    before = {line.rstrip("\n") for line in lines}
    report += [f"{rel}:{i}: LONG LINE ({len(line)} > {MAX_LINE} columns), rewrap by hand"
               for i, line in enumerate(out.splitlines(), 1) if len(line) > MAX_LINE and line not in before]
    return out, report


def _isort_key(name: str) -> tuple[int, str]:
    """isort's default order inside one import: CONSTANTS, then Classes, then functions and modules."""
    head = name.split(" ")[0]
    kind = 0 if head.isupper() and len(head) > 1 else 1 if head[:1].isupper() else 2
    return kind, head.lower()


def _add_imports(text: str, imports: list[tuple[str, str, str]]) -> str:
    """Add `from MODULE import NAME [as ALIAS]`: into a one-line import of MODULE the file has, else as a new line
    among its top-level `from skillc…` imports, in sorted position."""
    for module, name, alias in imports:
        tree = ast.parse(text)
        lines = text.splitlines(keepends=True)
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        same = [n for n in top if isinstance(n, ast.ImportFrom) and n.module == module and n.level == 0
                and n.lineno == n.end_lineno and not any(a.name == "*" for a in n.names)]
        item = name if alias == name else f"{name} as {alias}"
        if same and alias == name:
            node = same[0]
            names = [a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names] + [item]
            names.sort(key=_isort_key)
            old = lines[node.lineno - 1]
            indent = old[:len(old) - len(old.lstrip())]
            tail = old.rstrip("\n")[len(indent) + len(ast.get_source_segment(text, node) or ""):]
            lines[node.lineno - 1] = f"{indent}from {module} import {', '.join(names)}{tail}\n"
            text = "".join(lines)
            continue
        line = f"from {module} import {item}"
        ours = [n for n in top if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("skillc")]
        before = [n for n in ours if ast.unparse(n) > line]
        if before:
            lines.insert(before[0].lineno - 1, line + "\n")
        elif ours:
            lines.insert(ours[-1].end_lineno or ours[-1].lineno, line + "\n")
        elif top:
            lines.insert(top[-1].end_lineno or top[-1].lineno, "\n" + line + "\n")
        else:  # no import at all: after the module docstring
            first = tree.body[0] if tree.body else None
            index = first.end_lineno if isinstance(first, ast.Expr) and first.end_lineno else 0
            lines.insert(index, "\n" + line + "\n")
        text = "".join(lines)
    return text


STRICT_OLD = '''    entry = code if isinstance(code, Code) else _lookup(code)
'''
STRICT_NEW = ""
# Parameters that accept a string only while call sites still pass one.
STRICT_PARAMS = {"skillc/diagnostics/files.py": ("code: Code | str = codes.IO_ERROR", "code: Code = codes.IO_ERROR")}


def strict_make(root: Path) -> list[str]:
    """`make()` takes a `Code` only: the string path and its registry lookup go."""
    path = root / "skillc" / "diagnostics" / "diagnostic.py"
    text = path.read_text(encoding="utf-8")
    if STRICT_OLD not in text:
        return []
    text = text.replace("    code: Code | str,\n", "    code: Code,\n").replace(STRICT_OLD, STRICT_NEW)
    for field in ("code", "severity", "hint"):
        text = text.replace(f"entry.{field}", f"code.{field}")
    start = text.index("\n\ndef _lookup(")
    end = text.index("\n\n\n", start + 2)
    text = text[:start] + text[end:]
    path.write_text(text, encoding="utf-8")
    done = [f"{path}: make(code: Code, ...) — strings are no longer looked up"]
    for rel, (old, new) in STRICT_PARAMS.items():
        other = root / rel
        source = other.read_text(encoding="utf-8")
        if old in source:
            other.write_text(source.replace(old, new), encoding="utf-8")
            done.append(f"{other}: {new}")
    return done


def _files(paths: list[Path]) -> Iterator[Path]:
    for p in paths:
        yield from (sorted(p.rglob("*.py")) if p.is_dir() else [p])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true", help="print what would change; exit 1 if anything would")
    parser.add_argument("--strict-make", action="store_true", help="also make make() take a Code only")
    args = parser.parse_args(argv)
    root = Path.cwd()
    sys.path.insert(0, str(root))  # the tree being rewritten is the one whose registry names the constants
    tables = load_tables()
    changed = []
    for path in _files(args.paths or [root / "skillc"]):
        rel = path.resolve().relative_to(root.resolve()).as_posix() if path.resolve().is_relative_to(root.resolve()) \
            else path.as_posix()
        if path.name == "codes.py" or rel in SKIP or "__pycache__" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        new, report = rewrite(text, rel, tables)
        if new != text:
            changed.append(rel)
            print("\n".join(report))
            if not args.check:
                ast.parse(new)  # never write a file that does not parse
                path.write_text(new, encoding="utf-8")
    if args.strict_make and not args.check:
        print("\n".join(strict_make(root)))
    print(f"{len(changed)} file(s) {'would change' if args.check else 'changed'}", file=sys.stderr)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
