; Scopes and definitions for .skm (nvim-treesitter capture names): states, variables and tools of a machine.

[
  (machine)
  (fragment)
] @local.scope

(model_state name: (identifier) @local.definition.function)
(judge_state name: (identifier) @local.definition.function)
(tool_state name: (identifier) @local.definition.function)
(terminal name: (identifier) @local.definition.function)
(tool_declaration name: (identifier) @local.definition.function)
(input_declaration name: (identifier) @local.definition.var)
(var_declaration name: (identifier) @local.definition.var)
(counter_declaration name: (identifier) @local.definition.var)
(parameter name: (identifier) @local.definition.parameter)
(record_declaration name: (identifier) @local.definition.type)
(enum_declaration name: (identifier) @local.definition.type)

(identifier) @local.reference
