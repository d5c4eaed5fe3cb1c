"""Every wait in the tests is bounded: a test that waits for good stalls CI until its timeout (the run that
hung for 90 minutes on a pool's worker); one whose wait has a limit fails at once, saying what it waited for.

Read from the tests' syntax trees: subprocess calls without `timeout=`, `.wait()`, `.communicate()`, `.join()`
and `.get()` without a limit, and polling loops (`while …: sleep`) with no deadline in sight. Code in strings
(the scripts the tests write out) is not read; a wait in a helper module is, like one in a test.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parent
#: The subprocess functions that wait for the child (Popen does not; its waits are checked where they are).
WAITING = {"run", "check_output", "check_call", "call"}
#: Methods that wait for good when given no limit (str.join and dict.get always take an argument).
UNBOUNDED_BARE = {"wait", "communicate", "join", "get"}


def _sleeps(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "sleep"
               for n in ast.walk(node))


def _bounded_loop(loop: ast.While) -> bool:
    """A polling loop knows when to stop: a deadline, a clock read, or a process it watches ending."""
    text = ast.unparse(loop)
    return any(word in text for word in ("deadline", "monotonic", "time.time", ".poll()", "range("))


def unbounded_waits(path: Path) -> list[str]:
    """`path:line: what` for each wait in the file that has no limit, in line order."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [f"{path}:{line}: {what}" for line, what in sorted(_waits(tree))]


#: Context managers that cancel what runs inside them after a limit (anyio's, asyncio's).
SCOPES = ("fail_after", "move_on_after", "asyncio.timeout")


def _scoped_lines(tree: ast.AST) -> set[int]:
    """The lines inside `with anyio.fail_after(…)`-style blocks: a loop there is bounded by the scope."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                isinstance(i.context_expr, ast.Call) and any(w in ast.unparse(i.context_expr.func) for w in SCOPES)
                for i in node.items):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _waits(tree: ast.AST) -> Iterator[tuple[int, str]]:
    scoped = _scoped_lines(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.While) and _sleeps(node) and not _bounded_loop(node) and node.lineno not in scoped:
            yield node.lineno, "a polling loop without a deadline"
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        keywords = {k.arg for k in node.keywords}
        if "timeout" in keywords or None in keywords:  # bounded, or passed on (**kwargs) from a bounded caller
            continue
        name, owner = node.func.attr, node.func.value
        if isinstance(owner, ast.Name) and owner.id == "subprocess" and name in WAITING:
            yield node.lineno, f"subprocess.{name} without timeout="
        elif name in UNBOUNDED_BARE and not node.args and not (isinstance(owner, ast.Name) and owner.id == "asyncio"):
            yield node.lineno, f".{name}() without a timeout"


def test_every_wait_in_the_tests_is_bounded() -> None:
    found = [line for path in sorted(TESTS.rglob("*.py")) for line in unbounded_waits(path)]
    assert found == [], "\n".join(found)


def test_the_audit_finds_each_kind_of_unbounded_wait(tmp_path: Path) -> None:
    """The audit itself can fail: each kind it looks for is found, and each bounded form passes."""
    bad = tmp_path / "bad.py"
    bad.write_text("import subprocess, time\n"
                   "subprocess.run(['x'])\n"
                   "proc.wait()\n"
                   "proc.communicate()\n"
                   "thread.join()\n"
                   "queue.get()\n"
                   "while not done():\n    time.sleep(0.1)\n")
    assert [line.split(": ", 1)[1] for line in unbounded_waits(bad)] == [
        "subprocess.run without timeout=", ".wait() without a timeout", ".communicate() without a timeout",
        ".join() without a timeout", ".get() without a timeout", "a polling loop without a deadline"]
    good = tmp_path / "good.py"
    good.write_text("import subprocess, time\n"
                    "subprocess.run(['x'], timeout=60)\n"
                    "proc.wait(10)\n"
                    "proc.communicate(timeout=10)\n"
                    "thread.join(5)\n"
                    "queue.get(timeout=1)\n"
                    "', '.join(words)\n"
                    "d.get('k')\n"
                    "deadline = time.monotonic() + 5\n"
                    "while not done() and time.monotonic() < deadline:\n    time.sleep(0.1)\n")
    assert list(unbounded_waits(good)) == []
