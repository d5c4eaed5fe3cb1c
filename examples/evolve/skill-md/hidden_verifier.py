"""The hidden verifier: answer.txt must be the JSON object {"answer": 42}. The search sees only its verdict."""
import json


def check(workdir, outputs, trace):
    """Whether the run delivered the answer in the task's format."""
    try:
        return json.loads((workdir / "answer.txt").read_text(encoding="utf-8")) == {"answer": 42}
    except (OSError, ValueError):
        return False
