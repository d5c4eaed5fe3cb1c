"""The hidden verifier: answer.txt must be the JSON object {"answer": 42} and validated by `validate_answer`
(its receipt, checked.txt, says so). The search sees only its verdict."""
import json


def check(workdir, outputs, trace):
    """Whether the run delivered the answer in the task's format and validated it."""
    try:
        answer = json.loads((workdir / "answer.txt").read_text(encoding="utf-8"))
        receipt = (workdir / "checked.txt").read_text(encoding="utf-8")
    except (OSError, ValueError):
        return False
    return answer == {"answer": 42} and receipt.startswith("valid")
