"""The pre-commit hooks and the GitHub composite action name commands and flags that exist.
(They are not run here: there is no GitHub or pre-commit in the test environment.)"""

from __future__ import annotations

import shlex
import subprocess
import sys

import yaml

from tests.conftest import ROOT, STDLIB


def test_pre_commit_hooks_run_real_commands(tmp_path) -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in hooks} >= {"skillc-check", "skillc-fmt"}
    for hook in hooks:
        assert hook["language"] == "python" and hook["files"] == r"\.skm$"
        program, *args = shlex.split(hook["entry"])
        assert program == "skillc"
        target = tmp_path / "retry.skm"
        target.write_text((STDLIB / "retry.skm").read_text())
        # pre-commit appends the staged file names to the entry.
        r = subprocess.run([sys.executable, "-m", "skillc", *args, str(target)], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, (hook["id"], r.stdout, r.stderr)


def test_composite_action_checks_uploads_then_fails() -> None:
    action = yaml.safe_load((ROOT / ".github" / "actions" / "skillc" / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    check = next(s for s in steps if s.get("id") == "check")
    assert "skillc check --output-format sarif" in check["run"] and "--output-format github" in check["run"]
    upload = next(s for s in steps if "upload-sarif" in s.get("uses", ""))
    assert upload["if"].startswith("${{ always()") and upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    assert steps.index(upload) < len(steps) - 1 and "exit" in steps[-1]["run"]
    assert set(action["inputs"]) == {"paths", "args", "package", "sarif-file", "upload-sarif", "category"}
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    assert any("bash .ci/run" in s.get("run", "") for s in workflow["jobs"]["test"]["steps"])
