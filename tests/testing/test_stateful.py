"""Stateful testing of the runtime against a small reference model of the semantics.

Hypothesis drives one machine step by step with outputs it chooses (valid and
invalid); after every step the interpreter's state and variables must equal
those of a reference written directly from the semantics: the first true
guard wins, counters never pass their maximum, invalid output goes to the
fallback, and map writes are merge patches where `null` deletes a key.
"""

from __future__ import annotations

import json

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import skillc
from skillc.runtime import Interpreter, RunOptions, ToolBox
from skillc.runtime.executors.base import BaseExecutor, Response

LEDGER = """machine ledger {
  var items: map[str, int] = {}
  var verdict: enum { more, enough, bad } = more
  counter rounds max 3

  start update

  model update {
    reads items
    writes items
    prompt "Apply the next change to the ledger."
    -> decide
  }

  judge decide {
    reads items
    writes verdict
    prompt "More changes to come?"
    when verdict == bad -> fallback
    when verdict == more and rounds < 3 -> update { rounds += 1 }
    when len(items) > 2 -> big
    -> small
  }

  terminal big: success { requires items }
  terminal small: partial
  fallback
}
"""
MACHINE = skillc.check(LEDGER).machine
KEYS = st.sampled_from(["a", "b", "c", "d"])


class One(BaseExecutor):
    """Answers exactly the output the test chose for this step."""

    name = "one"
    answer = ""

    def complete(self, request):
        return Response(self.answer)


class Ledger(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.executor = One()
        self.interp = Interpreter(MACHINE, self.executor, ToolBox(), RunOptions(retries=0), LEDGER)
        self.reset()

    def reset(self) -> None:
        self.env = {"items": {}, "verdict": "more", "rounds": 0}
        self.state = "update"
        self.model = {"items": {}, "verdict": "more", "rounds": 0, "state": "update"}
        self.steps = 0

    def _step(self, answer: str) -> None:
        self.executor.answer = answer
        moved = self.interp.step(self.state, self.env, self.steps)
        self.env, self.state = moved.env, moved.target
        self.steps += 1

    def _running(self) -> bool:
        return self.model["state"] in ("update", "decide")

    @precondition(lambda self: not self._running())
    @rule()
    def start_again(self) -> None:
        """A run ended (terminal or fallback): begin a new one."""
        self.reset()

    @precondition(lambda self: self.model["state"] == "update")
    @rule(patch=st.dictionaries(KEYS, st.one_of(st.none(), st.integers(-5, 5), st.just("x")), max_size=3))
    def update(self, patch) -> None:
        self._step(json.dumps({"items": patch}))
        if any(isinstance(v, str) for v in patch.values()):
            self.model["state"] = "fallback"  # a patch that breaks map[str, int]: no retries left
            return
        items = dict(self.model["items"])
        for k, v in patch.items():
            if v is None:
                items.pop(k, None)
            else:
                items[k] = v
        self.model.update(items=items, state="decide")

    @precondition(lambda self: self.model["state"] == "update")
    @rule(text=st.sampled_from(["", "not json", "[]", '{"items": 3}', '{"other": {}}']))
    def invalid_update(self, text) -> None:
        self._step(text)
        self.model["state"] = "fallback"

    @precondition(lambda self: self.model["state"] == "decide")
    @rule(label=st.sampled_from(["more", "enough", "bad", "maybe"]))
    def decide(self, label) -> None:
        self._step(json.dumps({"verdict": label}))
        m = self.model
        if label == "maybe":
            m["state"] = "fallback"
            return
        m["verdict"] = label
        if label == "bad":
            m["state"] = "fallback"
        elif label == "more" and m["rounds"] < 3:
            m["rounds"] += 1
            m["state"] = "update"
        elif len(m["items"]) > 2:
            m["state"] = "big"
        else:
            m["state"] = "small"

    @invariant()
    def agrees_with_the_reference(self) -> None:
        assert self.state == self.model["state"]
        if self.state != "fallback":
            assert self.env["items"] == self.model["items"]
            assert self.env["rounds"] == self.model["rounds"] <= 3
            assert self.env["verdict"] == self.model["verdict"]


Ledger.TestCase.settings = settings(max_examples=150, stateful_step_count=20, deadline=None)
TestLedger = Ledger.TestCase
