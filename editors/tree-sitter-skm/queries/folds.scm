; Folds for .skm: machines, fragments, records, states, terminals and long strings.

[
  (machine)
  (fragment)
  (record_declaration)
  (model_state)
  (judge_state)
  (tool_state)
  (terminal_body)
  (triple_string)
] @fold
