; Highlights for .skm (capture names of nvim-treesitter, also read by Zed; Helix: queries/helix/).

; ------------------------------------------------------------------ keywords

[
  "import"
  "machine"
  "fragment"
  "record"
  "enum"
  "doc"
  "source"
  "input"
  "var"
  "counter"
  "max"
  "start"
  "use"
  "tools"
  "as"
  "allow"
  "mcp"
] @keyword

[
  "tool"
  "model"
  "judge"
  "terminal"
  "fallback"
] @keyword.function

[
  "reads"
  "writes"
  "prompt"
  "call"
  "from"
  "requires"
] @keyword

"when" @keyword.conditional

[
  "rule"
  "required"
  "order"
  "before"
  "forbid"
  "ends"
] @keyword.directive

[
  "and"
  "or"
  "not"
  "in"
] @keyword.operator

[
  "list"
  "map"
] @type.builtin

(enum_type "enum" @type.builtin)

; ------------------------------------------------------------------ names

(identifier) @variable

((identifier) @variable.builtin
  (#any-of? @variable.builtin "skill_dir" "workdir"))

(machine name: (identifier) @module)
(fragment name: (identifier) @function)
(exit_list (identifier) @label)
(use_declaration fragment: (identifier) @function)
(use_declaration name: (identifier) @module)
(use_tools kit: (identifier) @module)
(use_tools tool: (identifier) @function)

(tool_declaration name: (identifier) @function)
(call tool: (identifier) @function.call)

(model_state name: (identifier) @label)
(judge_state name: (identifier) @label)
(tool_state name: (identifier) @label)
(terminal name: (identifier) @label)
(start_declaration target: (qualified_name (identifier) @label))
(edge target: (qualified_name (identifier) @label))
(binding value: (qualified_name (identifier) @label))
(rule_required state: (qualified_name (identifier) @label))
(rule_forbid state: (qualified_name (identifier) @label))
(rule_order (qualified_name (identifier) @label))
(rule_ends state: (qualified_name (identifier) @label))
(rule_reads (qualified_name (identifier) @label))

(outcome) @constant.builtin

(record_declaration name: (identifier) @type)
(enum_declaration name: (identifier) @type)
(type_identifier) @type
((type_identifier) @type.builtin
  (#any-of? @type.builtin "str" "int" "float" "bool"))
(enum_label) @constant

(field_declaration name: (identifier) @variable.member)
(field_expression field: (identifier) @variable.member)

(parameter name: (identifier) @variable.parameter)
(argument name: (identifier) @variable.parameter)
(binding name: (identifier) @variable.parameter)
(write_item source: (identifier) @variable.parameter)

(input_declaration name: (identifier) @variable)
(var_declaration name: (identifier) @variable)
(counter_declaration name: (identifier) @variable)

(call_expression function: (identifier) @function.call)
((call_expression function: (identifier) @function.builtin)
  (#any-of? @function.builtin "len" "str" "contains" "quote" "trusted" "exists" "file"))

; ------------------------------------------------------------------ literals

[
  (true)
  (false)
] @boolean

(none) @constant.builtin

(integer) @number
(float) @number.float

(string) @string
(triple_string) @string
(escape_sequence) @string.escape

(doc_declaration (string) @string.documentation)
(doc_declaration (triple_string) @string.documentation)
(prompt (string) @string.special)
(prompt (triple_string) @string.special)
(rule quote: (_) @string.special)

(comment) @comment @spell

; ------------------------------------------------------------------ punctuation and operators

[
  "=="
  "!="
  "<"
  "<="
  ">"
  ">="
  "+"
  "-"
  "++"
  "*"
  "/"
  "%"
  "="
  "+="
  "-="
  "?"
] @operator

"->" @punctuation.special

[
  "("
  ")"
  "["
  "]"
  "{"
  "}"
] @punctuation.bracket

[
  ","
  "."
  ":"
] @punctuation.delimiter
