"""`Namer`: the names `skillc.ir.names.unique` would give, with keywords taken, however often a base is asked for."""

from __future__ import annotations

import random

from skillc.frontends.markdown.names import KEYWORDS, Namer
from skillc.ir.names import unique


def test_namer_gives_the_first_free_name_as_unique_does() -> None:
    rng = random.Random(13)
    bases = ["step", "step_2", "check", "in", "rule", "x"]
    for _ in range(50):
        taken = set(rng.sample(["step", "step_3", "check_2", "x", "x_2", "in_2"], 3))
        namer, seen = Namer(taken), set(taken)
        for _ in range(40):
            base = rng.choice(bases)
            expected = unique(base, seen | KEYWORDS)
            assert namer.fresh(base) == expected
            seen.add(expected)
            if rng.random() < 0.1:  # a name taken behind the namer's back (draft.py does this for states)
                extra = f"{rng.choice(bases)}_{rng.randint(2, 9)}"
                namer.taken.add(extra)
                seen.add(extra)

