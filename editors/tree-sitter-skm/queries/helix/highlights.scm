; Generated from ../highlights.scm by scripts/helix_queries.py with Helix's scope names: edit that file, then run the script.

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

"when" @keyword.control.conditional

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

(machine name: (identifier) @namespace)
(fragment name: (identifier) @function)
(exit_list (identifier) @label)
(use_declaration fragment: (identifier) @function)
(use_declaration name: (identifier) @namespace)
(use_tools kit: (identifier) @namespace)
(use_tools tool: (identifier) @function)

(tool_declaration name: (identifier) @function)
(call tool: (identifier) @function)

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

(field_declaration name: (identifier) @variable.other.member)
(field_expression field: (identifier) @variable.other.member)

(parameter name: (identifier) @variable.parameter)
(argument name: (identifier) @variable.parameter)
(binding name: (identifier) @variable.parameter)
(write_item source: (identifier) @variable.parameter)

(input_declaration name: (identifier) @variable)
(var_declaration name: (identifier) @variable)
(counter_declaration name: (identifier) @variable)

(call_expression function: (identifier) @function)
((call_expression function: (identifier) @function.builtin)
  (#any-of? @function.builtin "len" "str" "contains" "quote" "trusted" "exists" "file"))

; ------------------------------------------------------------------ literals

[
  (true)
  (false)
] @constant.builtin.boolean

(none) @constant.builtin

(integer) @constant.numeric.integer
(float) @constant.numeric.float

(string) @string
(triple_string) @string
(escape_sequence) @constant.character.escape

(doc_declaration (string) @string)
(doc_declaration (triple_string) @string)
(prompt (string) @string.special)
(prompt (triple_string) @string.special)
(rule quote: (_) @string.special)

(comment) @comment

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
