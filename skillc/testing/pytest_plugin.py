"""A pytest plugin (entry point `pytest11`): `.skm` files become test items that run `skillc test`.

    # pyproject.toml
    [tool.pytest.ini_options]
    skillc_machines = ["machines"]      # folders whose *.skm files are tested
    skillc_examples = 200               # runs per machine

The plugin itself needs only pytest; `.skm` items run without Hypothesis. Custom
properties over runs (which need Hypothesis, `pip install 'skillc[test]'`) are written
with `machine_property`:

    from skillc.testing.pytest_plugin import machine_property

    @machine_property("machines/answer.skm", examples=100)
    def test_never_gives_up_on_valid_output(machine, result):
        assert result.terminal != "fallback"
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from skillc.runtime.interpreter import RunResult


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("skillc_machines", "folders whose .skm machines become test items", type="paths", default=[])
    parser.addini("skillc_examples", "runs per machine for skillc test items", default="200")


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> MachineFile | None:
    folders = [Path(p).resolve() for p in parent.config.getini("skillc_machines")]
    if file_path.suffix == ".skm" and any(folder in file_path.resolve().parents for folder in folders):
        return MachineFile.from_parent(parent, path=file_path)
    return None


class MachineFile(pytest.File):
    """A `.skm` file under one of the `skillc_machines` folders: one item."""

    def collect(self) -> Iterator[MachineItem]:
        yield MachineItem.from_parent(self, name="skillc test")


class MachineError(Exception):
    """A machine failed its checks or an explored run broke a property."""


class MachineItem(pytest.Item):
    """`skillc check` and `skillc test` of one machine."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Some plugins' run-call wrappers (pytest-lsp's) only yield for items that carry fixtures.
        self.funcargs: dict[str, object] = {}

    def runtest(self) -> None:
        import skillc  # deferred: the plugin loads in every pytest session, skillc's stages only when a .skm runs
        from skillc.testing.explore import explore

        result = skillc.check(self.path)
        problems = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity.name in ("ERROR", "WARNING")]
        if result.machine is None or problems:
            raise MachineError("does not pass skillc check:\n  " + "\n  ".join(problems))
        report = explore(result.machine, self.path.read_text(encoding="utf-8"),
                         examples=int(self.config.getini("skillc_examples")))
        if report.failures:
            raise MachineError("\n".join(f"{f.prop}: {f.message} (trace {f.trace})" for f in report.failures))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: TracebackStyle | None = None) -> str | TerminalRepr:
        if isinstance(excinfo.value, MachineError):
            return f"{self.path}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"skillc test {self.path.name}"


def machine_property(path: str | Path, examples: int = 100) -> Callable[[Callable[..., object]], Callable[[], None]]:
    """Decorate `f(machine, result)`: it is called for every generated run of the machine and must not fail."""
    try:
        from hypothesis import HealthCheck, given, settings  # optional extra (skillc[test])
    except ModuleNotFoundError:
        raise ModuleNotFoundError("machine_property needs Hypothesis: pip install 'skillc[test]'",
                                  name="hypothesis") from None

    def wrap(f: Callable[..., object]) -> Callable[[], None]:
        import skillc  # deferred: the plugin loads in every pytest session; see runtest
        from skillc.testing.explore import step_bound
        from skillc.testing.strategies import runs

        machine = skillc.check(Path(path)).machine
        if machine is None:
            raise MachineError(f"{path} does not load")

        @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
        @given(runs(machine, max_steps=step_bound(machine)))
        def test(result: RunResult) -> None:
            f(machine, result)

        test.__name__ = f.__name__
        return test

    return wrap
