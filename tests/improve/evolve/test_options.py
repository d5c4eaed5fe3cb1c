"""The evolve options: the issue's defaults, and every out-of-range value refused with SKM840."""

from __future__ import annotations

import pytest

from skillc.improve.evolve import codes
from skillc.improve.evolve.options import EvolveOptions, option_problems


def test_the_defaults_are_the_issues() -> None:
    o = EvolveOptions()
    assert (o.beta, o.branching, o.c_puct, o.fpu_reduction) == (1.0, 5, 1.4, 0.1)
    assert (o.reflection_rounds, o.budget, o.repair_rounds, o.max_cases, o.case_timeout_s) == (3, 5, 3, 10, 180.0)
    assert o.strategy == "tree" and o.self_verifier and o.stop_on_success
    assert option_problems(o) == []


@pytest.mark.parametrize(("changes", "fragment"), [
    ({"branching": 0}, "branching must be at least 1, not 0"),
    ({"reflection_rounds": 0}, "reflection rounds must be at least 1"),
    ({"repair_rounds": -1}, "repair rounds must be at least 1"),
    ({"max_cases": 0}, "max cases must be at least 1"),
    ({"budget": -1}, "budget must not be negative"),
    ({"beta": -0.5}, "beta must not be negative"),
    ({"beta": float("nan")}, "beta must not be negative"),
    ({"c_puct": -1.0}, "c puct must not be negative"),
    ({"case_timeout_s": 0.0}, "case timeout must be positive"),
    ({"case_timeout_s": float("nan")}, "case timeout must be positive"),
    ({"strategy": "beam"}, "unknown strategy `beam`"),
    ({"budget": 10**12}, "budget must be at most 10,000"),  # issue 34: huge counts ran for good
    ({"branching": 10**9}, "branching must be at most 50"),
    ({"case_timeout_s": float("inf")}, "case timeout must be at most 86,400"),
    ({"c_puct": float("inf")}, "c puct must be at most"),
])
def test_out_of_range_options_are_refused(changes: dict[str, object], fragment: str) -> None:
    problems = option_problems(EvolveOptions(**changes))  # type: ignore[arg-type]
    assert [str(p.code) for p in problems] == [codes.INVALID_EVOLVE_OPTION.code]
    assert fragment in problems[0].message


def test_a_zero_budget_is_allowed() -> None:
    assert option_problems(EvolveOptions(budget=0)) == []
