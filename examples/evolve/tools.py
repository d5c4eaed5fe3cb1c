"""The Python tool of the missing-check and format-and-check suites (`tools = ["../tools.py"]`):
`validate_answer` re-reads the answer file, checks it is a JSON object with the key `answer`, and writes its
receipt to checked.txt (in the cell's work folder, the tool's current folder)."""

import json
from pathlib import Path


def validate_answer(path: str) -> dict:
    """Validate the answer file; the receipt says `valid: …` or `invalid: why`."""
    try:
        answer = json.loads(Path(path).read_text(encoding="utf-8"))
        ok = isinstance(answer, dict) and "answer" in answer
        report = f"valid: {json.dumps(answer)}" if ok else "invalid: not an object with the key answer"
    except (OSError, ValueError) as exc:
        ok, report = False, f"invalid: {exc}"
    Path("checked.txt").write_text(report + "\n", encoding="utf-8")
    return {"ok": ok, "report": report}
