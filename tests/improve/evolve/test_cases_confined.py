"""Issue #34: `skillc evolve`'s generated cases are untrusted code, run in the box of `skillc.sandbox`.

Each test is one thing a hostile case did before the box: rewrite the suite's hidden verifier (evolve then
reported "succeeded, reward 1" for a version the real verifier rejects), read an API key from the environment or
a private key from the disk, open a network connection, write into the cached output, leave a daemon running.
"""

from __future__ import annotations

import json
import shutil
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillc.cli import main
from skillc.improve.evolve.cases import Draft, run_case
from skillc.improve.evolve.state import Output
from skillc.sandbox import _box

FIXTURE = Path(__file__).parents[2] / "bench" / "fixtures" / "beats"
GOOD = (FIXTURE / "beats.skm").read_text(encoding="utf-8")
WRONG_FORMAT = GOOD.replace("printf '%s", "printf 'answer: %s")
WRONG_FILE = GOOD.replace("> answer.txt", "> result.txt")
VERIFIER = "def verify(workdir, outputs, trace):\n    return (workdir / 'answer.txt').read_text() == '42\\n'\n"
LANDLOCK = _box.landlock_abi() >= 1
MODES = [pytest.param("", id="strongest"), pytest.param("landlock,namespaces", id="degraded")]


def _py(source: str) -> Draft:
    return Draft("c", "python", source, "hard")


def _suite(tmp_path: Path) -> Path:
    """The beats suite with a Python verifier (the hidden one) in place of its file verifier."""
    suite = tmp_path / "suite"
    shutil.copytree(FIXTURE, suite, ignore=shutil.ignore_patterns("legacy"))
    text = (suite / "suite.toml").read_text(encoding="utf-8")
    text = text.replace('[verify]\nfile = "answer.txt"\nequals = "42\\n"', '[verify]\npython = "hidden:verify"')
    (suite / "suite.toml").write_text(text, encoding="utf-8")
    (suite / "hidden.py").write_text(VERIFIER, encoding="utf-8")
    return suite


def _roles(case: str) -> dict[str, Any]:
    """Reflection proposes A (still wrong: it writes result.txt); the self-verifier's one case is `case`."""
    reflect = {"root": [{"operations": [{"op": "add", "id": "h1", "description": "the answer file is wrong",
                                         "prediction": "answer.txt is wrong"}],
                         "children": [{"name": "A", "rank": 1, "machine": WRONG_FILE}]}],
               "A": [{"children": []}]}
    verify = {"h1": [[{"id": "tamper", "kind": "python", "source": case, "strength": "hard"}]]}
    return {"reflect": reflect, "verify": verify}


@pytest.mark.parametrize("off", MODES)
def test_a_case_that_rewrites_the_hidden_verifier_never_earns_a_reward(tmp_path: Path, off: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLC_SANDBOX_OFF", off)
    suite = _suite(tmp_path)
    hidden = suite / "hidden.py"
    case = (f"def check(workdir, outputs, trace):\n"
            f"    try:\n"
            f"        open({str(hidden)!r}, 'w').write('def verify(*args):\\n    return True\\n')\n"
            f"    except OSError:\n"
            f"        pass\n"
            f"    return True\n")
    roles = tmp_path / "roles.json"
    roles.write_text(json.dumps(_roles(case)), encoding="utf-8")
    machine = tmp_path / "root.skm"
    machine.write_text(WRONG_FORMAT, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["evolve", str(machine), "--suite", str(suite / "suite.toml"), "--task", "t1",
                                       "--executor", f"scripted:{suite / 'script.json'}", "--reflect-model",
                                       f"scripted:{roles}", "--budget", "1", "-o", str(out), "--json"],
                                catch_exceptions=False)
    found = json.loads(result.output)
    assert result.exit_code == 4 and not found["success"], result.output  # no version earned a reward
    assert found["best"]["reward"] == 0
    if not off and LANDLOCK:
        assert hidden.read_text(encoding="utf-8") == VERIFIER  # the write was refused
    else:  # nothing stopped the write: the hash taken when the suite loaded did
        assert hidden.read_text(encoding="utf-8") != VERIFIER
        tree = json.loads((out / "tree.json").read_text(encoding="utf-8"))
        assert tree["success"] is False


@pytest.mark.parametrize("off", MODES)
def test_a_case_cannot_read_an_api_key_from_the_environment(output: Output, off: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLC_SANDBOX_OFF", off)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-secret")
    case = "import os\ndef check(workdir, outputs, trace):\n    return 'OPENAI_API_KEY' in os.environ\n"
    result = run_case(_py(case), output, 30)
    assert result.error is None and result.holds is False


@pytest.mark.skipif(not LANDLOCK, reason="reads outside the box are refused by Landlock only")
def test_a_case_cannot_read_a_private_key(output: Output, tmp_path: Path) -> None:
    key = tmp_path / "home" / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True)
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n", encoding="utf-8")
    case = (f"def check(workdir, outputs, trace):\n    try:\n        open({str(key)!r}).read()\n"
            f"    except OSError:\n        return False\n    return True\n")
    assert run_case(_py(case), output, 30).holds is False


def test_a_case_cannot_open_a_network_connection(output: Output) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    case = (f"import socket\ndef check(workdir, outputs, trace):\n    try:\n"
            f"        socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
            f"    except OSError:\n        return False\n    return True\n")
    try:
        result = run_case(_py(case), output, 30)
    finally:
        listener.close()
    assert result.error is None and result.holds is False


@pytest.mark.parametrize("off", MODES)
def test_a_case_cannot_change_the_cached_output_through_its_absolute_path(output: Output, off: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLC_SANDBOX_OFF", off)
    answer = output.workdir / "answer.txt"
    case = (f"def check(workdir, outputs, trace):\n    try:\n        open({str(answer)!r}, 'w').write('1')\n"
            f"    except OSError:\n        pass\n    return True\n")
    result = run_case(_py(case), output, 30)
    if off or not LANDLOCK:  # written: the case is broken, never a case that holds
        assert result.error is not None and "changed the cached output" in result.error
    else:
        assert answer.read_text(encoding="utf-8") == "42\n" and result.holds


@pytest.mark.parametrize("off", MODES)
def test_a_daemon_a_case_starts_does_not_outlive_it(output: Output, tmp_path: Path, off: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLC_SANDBOX_OFF", "landlock," + off)  # Landlock off: the daemon's mark could be written
    marker = tmp_path / "daemon-was-here"
    result = run_case(Draft("c", "shell", f"(setsid sh -c 'sleep 1; touch {marker}' &); exit 0", "hard"),
                      output, 30)
    assert result.holds
    time.sleep(1.2)  # past the daemon's second
    assert not marker.exists()
