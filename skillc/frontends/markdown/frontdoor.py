"""Which compiler `skillc build` runs: the LLM compiler whenever a model is configured, else the offline one.

The model comes from `--model`, then the environment variable `SKILLC_MODEL`, then `model` in the project's
configuration (`[tool.skillc]` in pyproject.toml, or skillc.toml; the nearest one above the skill). The
value `offline` (or `none`) in any of them forces the offline compiler. This module is light on purpose:
an offline build never loads the LLM compiler.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

#: The environment variable naming the model, tried after `--model`.
MODEL_ENV: Final = "SKILLC_MODEL"
#: What an offline build says about itself (stderr, after the summary).
OFFLINE_LINE: Final = "offline draft: no model configured (--model, SKILLC_MODEL or [tool.skillc] model)"
_OFFLINE: Final = ("offline", "none")


def resolve_model(flag: str | None, skill: Path | None, environ: Mapping[str, str] | None = None
                  ) -> tuple[str | None, str]:
    """The model spec a build uses (None: offline) and where it was set (`--model`, `SKILLC_MODEL`,
    `config`, or "" when nothing set one)."""
    env = os.environ if environ is None else environ
    for value, origin in ((flag, "--model"), (env.get(MODEL_ENV) or None, MODEL_ENV)):
        if value and value.strip():
            return (None, origin) if value.strip().lower() in _OFFLINE else (value.strip(), origin)
    if skill is not None:
        from skillc.config import find_config  # deferred: this module stays light (see above)

        try:
            where = skill.resolve()
        except (OSError, RuntimeError):  # a symlink loop: the build itself reports the unreadable skill
            return None, ""
        config, _ = find_config(where)
        model = getattr(config, "model", None)
        if isinstance(model, str) and model.strip():
            return (None, "config") if model.strip().lower() in _OFFLINE else (model.strip(), "config")
    return None, ""


__all__ = ["MODEL_ENV", "OFFLINE_LINE", "resolve_model"]
