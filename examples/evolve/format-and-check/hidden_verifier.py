"""Hidden verifier: answer.txt must be {"answer": 42} as JSON and the check must have been recorded."""
import json
from pathlib import Path


def check(workdir: Path) -> bool:
    try:
        answer = json.loads((workdir / "answer.txt").read_text())
    except (OSError, ValueError):
        return False
    return answer == {"answer": 42} and (workdir / "checked.txt").is_file()
