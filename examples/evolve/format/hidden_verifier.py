"""Hidden verifier: answer.txt must be the JSON object {"answer": 42}."""
import json
from pathlib import Path


def check(workdir: Path) -> bool:
    try:
        return json.loads((workdir / "answer.txt").read_text()) == {"answer": 42}
    except (OSError, ValueError):
        return False
