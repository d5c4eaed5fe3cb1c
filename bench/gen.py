"""Synthetic machines for the benchmarks: chains of model, judge and tool states with guarded
branches and counted loops, so every construct of the language appears at scale."""

from __future__ import annotations


def synthetic_machine(n_states: int) -> str:
    """A well-formed machine of about `n_states` states."""
    out = [
        "machine synthetic {",
        '  doc "Generated for benchmarks."',
        "  tool bash(command: str) -> (stdout: str, exit_code: int)",
        "  input task: str",
        "  var note: str",
        "  var verdict: enum { good, bad, unsure }",
        "  var status: int",
        "  counter retries max 3",
        "  start s0",
        "",
    ]
    body = max(n_states - 2, 1)
    for i in range(body):
        nxt = f"s{i + 1}" if i + 1 < body else "done"
        kind = ("model", "judge", "tool")[i % 3]
        if kind == "model":
            out += [
                f"  model s{i} {{",
                "    reads task",
                "    writes note",
                f'    prompt """\n      Step {i}: work on the task and write a short note.\n'
                '      Keep it brief.\n      """',
                f"    -> {nxt}",
                "  }",
            ]
        elif kind == "judge":
            back = f"s{max(i - 1, 0)}"
            out += [
                f"  judge s{i} {{",
                "    reads note",
                "    writes verdict",
                '    prompt "Is the note good?"',
                f"    when verdict == bad and retries < 3 -> {back} {{ retries += 1 }}",
                f"    when verdict in {{unsure}} and len(note) > 10 -> {nxt}",
                f"    -> {nxt}",
                "  }",
            ]
        else:
            out += [
                f"  tool s{i} {{",
                "    reads note",
                '    call bash(command: "echo " ++ quote(note))',
                "    writes status = exit_code",
                "    when status != 0 -> fallback",
                f"    -> {nxt}",
                "  }",
            ]
        out.append("")
    out += [
        "  terminal done: success { requires note }",
        "  fallback",
        '  rule required s0 "Always start with the first step."',
        "}",
    ]
    return "\n".join(out) + "\n"


def nested_loop_machine(n_states: int) -> str:
    """A machine that passes `skillc check`: blocks of ten states, each with an inner repair loop
    (its own counter, reset when the block is entered) and, every fifth block, an outer loop back
    over five blocks paid by a shared counter — branches, guards and nested loops at every size."""
    blocks = max(1, n_states // 10)
    out = [
        "machine nested {",
        '  doc "Generated for the checker benchmark."',
        "  tool bash(command: str) -> (stdout: str, exit_code: int)",
        "  input task: str",
        "  var note: str",
        "  var verdict: enum { good, bad, unsure }",
        "  var status: int",
        "  counter outer max 3",
    ]
    out += [f"  counter r{b} max 2" for b in range(blocks)]
    out += ["  start b0_0", ""]

    def state(kind: str, name: str, body: list[str]) -> None:
        out.append(f"  {kind} {name} {{")
        out.extend("    " + line for line in body)
        out.append("  }")

    for b in range(blocks):
        nxt = f"b{b + 1}_0" if b + 1 < blocks else "done"
        p = f"b{b}_"
        state("model", p + "0", ["reads task", "writes note", 'prompt "Start the block."', f"-> {p}1 {{ r{b} = 0 }}"])
        state("model", p + "1", ["reads task, note", "writes note", 'prompt "Draft."', f"-> {p}2"])
        state("judge", p + "2", ["reads note", "writes verdict", 'prompt "Judge the draft."',
                                 f"when verdict == bad and r{b} < 2 -> {p}1 {{ r{b} += 1 }}",
                                 f"when verdict == unsure and len(note) > 10 -> {p}4", f"-> {p}3"])
        state("tool", p + "3", ["reads note", 'call bash(command: "echo " ++ quote(note))',
                                "writes status = exit_code", "when status != 0 -> fallback", f"-> {p}4"])
        for k in range(4, 9):
            state("model", f"{p}{k}", ["reads note", "writes note", f'prompt "Step {k}."', f"-> {p}{k + 1}"])
        back = ""
        if b % 5 == 4:
            back = f"when verdict == bad and outer < 3 -> b{b - 4}_0 {{ outer += 1 }}"
        state("judge", p + "9", ["reads note", "writes verdict", 'prompt "Is the block done?"',
                                 *([back] if back else []),
                                 "when verdict == unsure -> fallback", f"-> {nxt}"])
    out += ["  terminal done: success { requires note }", "  fallback",
            '  rule required b0_2 "Always judge the first draft."', "}"]
    return "\n".join(out) + "\n"
