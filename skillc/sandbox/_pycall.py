"""Calls one Python function inside the box; standard library only (run as a script, `python -I _pycall.py`).

The request is one JSON object on stdin:

    {"op": "call", "file": PATH, "folder": DIR, "module": NAME, "function": NAME,
     "args": [...], "kwargs": {...}, "paths": [index of each arg to pass as a pathlib.Path]}
    {"op": "describe", "file": PATH, "folder": DIR, "module": NAME}

The answer is one JSON object on the file descriptor the runner keeps for itself (the function's own prints go
to stderr, so they never corrupt it): {"ok": true, "value": V} (V as JSON; a value JSON cannot hold is an
error), {"ok": true, "functions": {name: [[param, kind, has default], ...]}} for `describe`, or
{"ok": false, "error": "...", "kind": "import" | "missing" | "raised" | "exit" | "value"}.
"""

import importlib.util
import json
import os
import sys
from pathlib import Path


def _load(request: dict) -> object:
    """The module, loaded from its file with its folder first on sys.path (for its neighbours)."""
    sys.path.insert(0, request["folder"])
    spec = importlib.util.spec_from_file_location(request["module"], request["file"])
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {request['file']}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[request["module"]] = module
    spec.loader.exec_module(module)
    return module


def _describe(module: object) -> dict:
    """The public functions the module defines, with their parameters."""
    import inspect  # only here: it costs a call's start-up a fifth

    found = {}
    for name, fn in vars(module).items():
        if inspect.isfunction(fn) and not name.startswith("_") and fn.__module__ == getattr(module, "__name__", ""):
            params = inspect.signature(fn).parameters.values()
            found[name] = [[p.name, p.kind.name, p.default is not inspect.Parameter.empty] for p in params]
    return {"ok": True, "functions": found}


def _failure(kind: str, exc: BaseException) -> dict:
    """An error answer naming the exception."""
    import traceback  # only here, on failure: it costs every call's start-up (standard library only)

    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return {"ok": False, "kind": kind, "error": last}


def _answer(request: dict) -> dict:
    """Load, then describe or call."""
    try:
        module = _load(request)
    except SystemExit as exc:
        return {"ok": False, "kind": "import", "error": f"SystemExit: sys.exit({exc.code!r}) while importing"}
    except BaseException as exc:  # noqa: BLE001 - the module is untrusted: whatever it raises is its failure
        return _failure("import", exc)
    if request["op"] == "describe":
        return _describe(module)
    fn = getattr(module, request["function"], None)
    if not callable(fn):
        return {"ok": False, "kind": "missing", "error": f"{request['module']} has no function "
                                                          f"{request['function']!r}"}
    args = [Path(a) if i in request.get("paths", ()) else a for i, a in enumerate(request.get("args", []))]
    try:
        value = fn(*args, **request.get("kwargs", {}))
    except SystemExit as exc:
        return {"ok": False, "kind": "exit", "error": f"sys.exit({exc.code!r})"}
    except BaseException as exc:  # noqa: BLE001
        return _failure("raised", exc)
    if isinstance(value, tuple):
        value = {"__tuple__": list(value)}
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return {"ok": False, "kind": "value", "error": f"returned {value!r:.80}, which is not JSON"}
    return {"ok": True, "value": value}


def main() -> None:
    """Answer the request on stdin on a private copy of stdout; the function's prints go to stderr."""
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    request = json.loads(sys.stdin.read())
    answer = _answer(request)
    os.write(answer_fd, json.dumps(answer).encode())
    os.close(answer_fd)
    sys.stderr.flush()
    os._exit(0)  # threads the code left running do not keep the box open


if __name__ == "__main__":
    main()
