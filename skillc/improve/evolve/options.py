"""The constants of `skillc evolve` as one options record, with the issue's defaults, and their validation."""

from __future__ import annotations

from typing import Literal

import attrs

from skillc.diagnostics import Diagnostic, make
from skillc.improve.evolve import codes

#: The search strategy: the patch tree (PUCT), or greedy in-place refinement (the ablation that gets trapped).
Strategy = Literal["tree", "greedy"]
STRATEGIES: tuple[str, ...] = ("tree", "greedy")


@attrs.frozen
class EvolveOptions:
    """Every constant of the search (defaults from issue #20).

    beta: prior temperature; branching: B, children per expansion; c_puct: the exploration constant;
    fpu_reduction: first-play urgency below the parent's value; reflection_rounds: L; budget: K evolved
    executions after the root; repair_rounds: V generation/repair rounds of the self-verifier;
    max_cases: C new cases per invocation; case_timeout_s: the limit of one case on one output.
    """

    beta: float = 1.0
    branching: int = 5
    c_puct: float = 1.4
    fpu_reduction: float = 0.1
    reflection_rounds: int = 3
    budget: int = 5
    repair_rounds: int = 3
    max_cases: int = 10
    case_timeout_s: float = 180.0
    strategy: Strategy = "tree"
    self_verifier: bool = True  # False: the ablation without generated tests (reward alone)
    stop_on_success: bool = True  # stop at the first rewarded version (nothing can beat it)


_COUNTS = ("branching", "reflection_rounds", "repair_rounds", "max_cases")
_NON_NEGATIVE = ("beta", "c_puct", "fpu_reduction", "budget")
#: The most each constant may be: beyond, a search runs for days or allocates before its first step (issue 34).
MAXIMA: dict[str, float] = {"branching": 50, "reflection_rounds": 20, "repair_rounds": 20, "max_cases": 200,
                            "budget": 10_000, "beta": 1e6, "c_puct": 1e6, "fpu_reduction": 1e6,
                            "case_timeout_s": 86_400.0}


def option_problems(options: EvolveOptions) -> list[Diagnostic]:
    """Counts below 1, negative constants, a non-positive timeout, any constant above its maximum (`MAXIMA`) or an
    unknown strategy, as SKM840."""
    problems = [make(codes.INVALID_EVOLVE_OPTION, f"{name.replace('_', ' ')} must be at least 1, not {value}")
                for name in _COUNTS if (value := getattr(options, name)) < 1]
    problems += [make(codes.INVALID_EVOLVE_OPTION, f"{name.replace('_', ' ')} must not be negative, not {value}")
                 for name in _NON_NEGATIVE if not (value := getattr(options, name)) >= 0]  # NaN too
    if not options.case_timeout_s > 0:
        problems.append(make(codes.INVALID_EVOLVE_OPTION,
                             f"the case timeout must be positive, not {options.case_timeout_s}"))
    problems += [make(codes.INVALID_EVOLVE_OPTION, f"{name.replace('_', ' ').removesuffix(' s')} must be at most "
                      f"{most:,g}, not {value:,g}") for name, most in MAXIMA.items()
                 if (value := getattr(options, name)) > most]  # inf too
    if options.strategy not in STRATEGIES:
        problems.append(make(codes.INVALID_EVOLVE_OPTION, f"unknown strategy `{options.strategy}`; the strategies "
                                                          f"are {', '.join(STRATEGIES)}"))
    return problems
