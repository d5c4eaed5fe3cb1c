"""The hidden verifier: answer.txt must hold 42 and the run must have delivered the answer (its success terminal's
evidence). The search sees only its verdict."""


def check(workdir, outputs, trace):
    """Whether the run wrote the answer and delivered it."""
    try:
        written = (workdir / "answer.txt").read_text(encoding="utf-8").strip()
    except OSError:
        return False
    return written == "42" and outputs.get("answer") == "42"
