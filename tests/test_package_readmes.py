"""Every package under skillc/ has a README.md that names each of its modules and subpackages.

A module is named as `name.py` in backticks and a subpackage as `name/`; a README
must name every module (`__init__.py` may be left out) and every subpackage of its
package, and nothing it names that way may be missing. Only the file tree is read:
no module is imported.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SKILLC = Path(__file__).resolve().parents[1] / "skillc"

# A bare name in its own code span: `lower.py`, `executors/` (not `docs/x.md` or `skills/_runtime.py`).
MODULE_REF = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*\.py)`")
PACKAGE_REF = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)/`")
OPTIONAL = {"__init__.py"}


def _packages() -> list[Path]:
    """Every folder under skillc/ (skillc itself included) that holds an `__init__.py`."""
    return sorted(p.parent for p in SKILLC.rglob("__init__.py") if "__pycache__" not in p.parts)


def _modules(package: Path) -> set[str]:
    """The `.py` files directly inside a package."""
    return {p.name for p in package.glob("*.py")}


def _subpackages(package: Path) -> set[str]:
    """The folders directly inside a package that are packages themselves."""
    return {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}


def _label(package: Path) -> str:
    """The package's folder relative to the repository, for test ids and messages."""
    return package.relative_to(SKILLC.parent).as_posix()


PACKAGES = _packages()


def test_packages_are_found() -> None:
    """The walk finds the nested packages too, so the parametrised tests cannot pass vacuously."""
    labels = {_label(p) for p in PACKAGES}
    assert {"skillc", "skillc/check", "skillc/runtime/executors", "skillc/frontends/markdown"} <= labels


def _problems(package: Path) -> list[str]:
    """What the package's README gets wrong: a missing README, modules left out, names that do not exist."""
    readme = package / "README.md"
    if not readme.is_file():
        return ["there is no README.md naming its modules"]
    text = readme.read_text(encoding="utf-8")
    named_modules = set(MODULE_REF.findall(text))
    named_packages = set(PACKAGE_REF.findall(text))
    modules, subpackages = _modules(package), _subpackages(package)
    problems = [f"module `{m}` is not named" for m in sorted(modules - OPTIONAL - named_modules)]
    problems += [f"subpackage `{s}/` is not named" for s in sorted(subpackages - named_packages)]
    problems += [f"`{m}` is named but does not exist" for m in sorted(named_modules - modules)]
    problems += [f"`{s}/` is named but is not a subpackage" for s in sorted(named_packages - subpackages)]
    return problems


@pytest.mark.parametrize("package", PACKAGES, ids=_label)
def test_readme_names_every_module(package: Path) -> None:
    """The README exists and names each module and subpackage of its package, and only those."""
    problems = _problems(package)
    assert not problems, f"{_label(package)}/README.md: " + "; ".join(problems)


def test_a_stale_readme_is_reported(tmp_path: Path) -> None:
    """A module left out, an invented module and an invented subpackage are each reported."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    for name in ("__init__.py", "kept.py", "forgotten.py", "sub/__init__.py"):
        (package / name).write_text("", encoding="utf-8")
    assert _problems(package) == ["there is no README.md naming its modules"]
    (package / "README.md").write_text(
        "- `kept.py` — kept\n- `ghost.py` — gone\n- `sub/` — a subpackage\n- `gone/` — not one\n"
        "- `docs/x.py` and `skills/_runtime.py` are paths, not names\n", encoding="utf-8")
    assert _problems(package) == ["module `forgotten.py` is not named", "`ghost.py` is named but does not exist",
                                  "`gone/` is named but is not a subpackage"]
