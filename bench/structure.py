"""The shape of the code a maintainer reads: the command hallway, laziness, `Any`, ignores, long functions, ruff.

Run: python bench/structure.py [ROOT ...]      (default: this checkout; several roots print side by side)

Counted from the syntax trees of `ROOT/skillc/**/*.py`: lines of `api.py`, `console.py` and `cli.py`;
function-local imports (an `import` inside a function body), those outside the start-up boundary
(`api`/`language`/`console`/`cli`/`__main__`) and those naming an optional extra (`EXTRAS`: every extra of
pyproject.toml, Z3 and the pytest plugin's pytest, and `skillc.check.smt`, which exists to wrap Z3), and those
re-importing a module the file already imports at its top; `Any` used as a name; `# type: ignore` comments;
functions longer than 80 lines; and `ruff check`
findings over skillc/, bench/, tools/ and tests/ with the project's configuration (when ruff is installed).
"""

from __future__ import annotations

import argparse
import ast
import shutil
import subprocess
from pathlib import Path

BOUNDARY = {"api.py", "language.py", "console.py", "cli.py", "__main__.py"}
EXTRAS = ("ray", "llama_cpp", "mcp", "anyio", "z3", "textworld", "pddlgym", "pyperplan", "gym", "langgraph", "openai",
          "anthropic", "opentelemetry", "lsprotocol", "pygls", "gymnasium", "statelint", "matplotlib", "scipy",
          "hypothesis", "pytest")
#: skillc's own modules that exist to wrap an extra: importing one loads it (`skillc.check.smt` is the Z3 encoding).
WRAPPERS = ("skillc.check.smt",)


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import statement names."""
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    return [alias.name for alias in node.names]


def _top_imports(tree: ast.Module) -> set[str]:
    """Modules imported at module level (also under `if`/`try` at the top, not inside functions)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node.col_offset == 0:
            found.update(_imported(node))
    return found


def measure(root: Path) -> dict[str, int]:
    """Every figure of one checkout."""
    figures = dict.fromkeys(["api.py lines", "console.py lines", "cli.py lines", "python lines",
                             "function-local imports", "  outside the start-up boundary", "  of optional extras",
                             "  re-importing a top import", "Any", "# type: ignore", "functions > 80 lines"], 0)
    for name in ("api.py", "console.py", "cli.py"):
        figures[f"{name} lines"] = len((root / "skillc" / name).read_text().splitlines())
    for path in sorted((root / "skillc").rglob("*.py")):
        text = path.read_text()
        figures["python lines"] += len(text.splitlines())
        figures["# type: ignore"] += text.count("# type: ignore")
        tree = ast.parse(text)
        top = _top_imports(tree)
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if (func.end_lineno or func.lineno) - func.lineno + 1 > 80:
                figures["functions > 80 lines"] += 1
            for node in ast.walk(func):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and _direct(func, node):
                    modules = _imported(node)
                    figures["function-local imports"] += 1
                    outside = path.name not in BOUNDARY or path.parent.name != "skillc"
                    figures["  outside the start-up boundary"] += outside
                    figures["  of optional extras"] += any(m.split(".")[0] in EXTRAS or m in WRAPPERS for m in modules)
                    figures["  re-importing a top import"] += any(m in top for m in modules)
        figures["Any"] += sum(1 for n in ast.walk(tree) if (isinstance(n, ast.Name) and n.id == "Any")
                              or (isinstance(n, ast.Attribute) and n.attr == "Any"))
    if shutil.which("ruff"):
        done = subprocess.run(["ruff", "check", "--quiet", "--output-format", "concise", "skillc", "bench", "tools",
                               "tests"], cwd=root, capture_output=True, text=True)
        figures["ruff findings"] = sum(1 for line in done.stdout.splitlines() if line.strip() and ":" in line)
    return figures


def _direct(func: ast.AST, node: ast.AST) -> bool:
    """Whether node lies in func's own body, not in a function nested inside it (counted there)."""
    stack = list(ast.iter_child_nodes(func))
    while stack:
        child = stack.pop()
        if child is node:
            return True
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(child))
    return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", nargs="*", type=Path, default=[Path(__file__).resolve().parent.parent])
    args = ap.parse_args()
    columns = [measure(root.resolve()) for root in args.roots]
    names = list(dict.fromkeys(k for c in columns for k in c))
    print(f"{'figure':30}" + "".join(f"{str(r)[-18:]:>20}" for r in args.roots))
    for name in names:
        print(f"{name:30}" + "".join(f"{c.get(name, '-'):>20}" for c in columns))


if __name__ == "__main__":
    main()
