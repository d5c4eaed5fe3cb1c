; Indentation for .skm (nvim-treesitter capture names): blocks indent their items, closing brackets dedent.

[
  (body)
  (state_body)
  (terminal_body)
  (assign_block)
  (record_declaration)
  (enum_labels)
  (parameters)
  (call)
  (use_declaration)
  (use_exits)
  (list)
  (set)
] @indent.begin

[
  "}"
  ")"
  "]"
] @indent.branch @indent.end

(comment) @indent.ignore
(triple_string) @indent.ignore
