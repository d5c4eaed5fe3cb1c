/**
 * @file The .skm language of skillc: checked state machines compiled from agent skills.
 * @license MIT
 *
 * A tree-sitter transcription of grammar/skm.lark, which stays the single source of truth: every
 * keyword of it appears here (tests/editors/test_tree_sitter.py checks that, and parses every shipped
 * .skm file without an ERROR or MISSING node). Keywords are contextual, as in skillc's own parser:
 * `word` makes a keyword-like word a plain name wherever no keyword may stand (a variable may be
 * called `max` or `doc`).
 */

/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

const PREC = {
  or: 1,
  and: 2,
  not: 3,
  compare: 4,
  sum: 5,
  product: 6,
  unary: 7,
  postfix: 8,
};

/** One or more `rule`s separated by commas. */
function commaSep1(rule) {
  return seq(rule, repeat(seq(',', rule)));
}

/** One or more `rule`s separated by commas, with an optional trailing comma. */
function commaSep1Trailing(rule) {
  return seq(commaSep1(rule), optional(','));
}

module.exports = grammar({
  name: 'skm',

  extras: $ => [/\s/, $.comment],

  word: $ => $.identifier,

  supertypes: $ => [$._expression, $._type],

  rules: {
    source_file: $ => repeat($._module_item),

    _module_item: $ => choice(
      $.import_declaration,
      $.record_declaration,
      $.enum_declaration,
      $.fragment,
      $.machine,
    ),

    // ------------------------------------------------------------ modules

    import_declaration: $ => seq('import', field('path', $.string)),

    machine: $ => seq('machine', field('name', $.identifier), field('body', $.body)),

    fragment: $ => seq(
      'fragment',
      field('name', $.identifier),
      field('parameters', $.parameters),
      optional(field('exits', $.exit_list)),
      field('body', $.body),
    ),

    exit_list: $ => seq('->', '(', commaSep1Trailing($.identifier), ')'),

    body: $ => seq('{', repeat($._body_item), '}'),

    _body_item: $ => choice(
      $.doc_declaration,
      $.source_declaration,
      $.tool_declaration,
      $.record_declaration,
      $.enum_declaration,
      $.input_declaration,
      $.var_declaration,
      $.counter_declaration,
      $.start_declaration,
      $.model_state,
      $.judge_state,
      $.tool_state,
      $.terminal,
      $.fallback,
      $.rule,
      $.use_declaration,
      $.use_tools,
      $.allow_declaration,
    ),

    doc_declaration: $ => seq('doc', $._string),
    source_declaration: $ => seq('source', $._string),

    // ------------------------------------------------------------ declarations

    tool_declaration: $ => seq(
      'tool',
      field('name', $.identifier),
      field('parameters', $.parameters),
      optional(seq('->', field('results', $.parameters))),
      optional($.tool_source),
    ),

    // a tool an MCP server serves: `from mcp "docs"`, `as "get-page"` when the server calls it otherwise
    tool_source: $ => seq('from', 'mcp', field('server', $._string), optional(seq('as', field('remote', $._string)))),

    // the agent tool kit (`use tools std`, or a subset: `use tools std(read, bash)`)
    use_tools: $ => seq(
      'use', 'tools',
      field('kit', $.identifier),
      optional(seq('(', commaSep1Trailing(field('tool', $.identifier)), ')')),
    ),

    // the capability set, in allowed-tools spelling: `allow "Read", "Bash(git diff:*)"`
    allow_declaration: $ => seq('allow', commaSep1($._string)),

    parameters: $ => seq('(', optional(commaSep1Trailing($.parameter)), ')'),
    parameter: $ => seq(field('name', $.identifier), ':', field('type', $._type)),

    record_declaration: $ => seq(
      'record', field('name', $.identifier), '{', repeat($.field_declaration), '}',
    ),
    field_declaration: $ => seq(field('name', $.identifier), ':', field('type', $._type), optional(',')),

    enum_declaration: $ => seq('enum', field('name', $.identifier), field('labels', $.enum_labels)),
    enum_labels: $ => seq('{', commaSep1Trailing(alias($.identifier, $.enum_label)), '}'),

    input_declaration: $ => seq(
      'input', field('name', $.identifier), ':', field('type', $._type),
      optional(seq('=', field('value', $._expression))),
    ),
    var_declaration: $ => seq(
      'var', field('name', $.identifier), ':', field('type', $._type),
      optional(seq('=', field('value', $._expression))),
    ),
    counter_declaration: $ => seq('counter', field('name', $.identifier), 'max', field('bound', $.integer)),
    start_declaration: $ => seq('start', field('target', $.qualified_name)),

    // ------------------------------------------------------------ types

    _type: $ => choice($._simple_type, $.optional_type),
    optional_type: $ => seq($._simple_type, '?'),
    _simple_type: $ => choice(alias($.identifier, $.type_identifier), $.list_type, $.map_type, $.enum_type),
    list_type: $ => seq('list', '[', field('element', $._type), ']'),
    map_type: $ => seq('map', '[', field('key', $._type), ',', field('value', $._type), ']'),
    enum_type: $ => seq('enum', field('labels', $.enum_labels)),

    // ------------------------------------------------------------ states

    model_state: $ => seq('model', field('name', $.identifier), field('body', $.state_body)),
    judge_state: $ => seq('judge', field('name', $.identifier), field('body', $.state_body)),
    tool_state: $ => seq('tool', field('name', $.identifier), field('body', $.state_body)),

    state_body: $ => seq('{', repeat($._state_item), '}'),

    _state_item: $ => choice(
      $.reads,
      $.writes,
      $.prompt,
      $.call,
      $.doc_declaration,
      $.from_declaration,
      $.edge,
    ),

    reads: $ => seq('reads', commaSep1($.qualified_name)),
    writes: $ => seq('writes', commaSep1($.write_item)),
    write_item: $ => seq(field('target', $.qualified_name), optional(seq('=', field('source', $.identifier)))),
    prompt: $ => seq('prompt', $._string),
    call: $ => seq(
      'call',
      field('tool', $.identifier),
      '(', optional(commaSep1Trailing($.argument)), ')',
    ),
    argument: $ => seq(field('name', $.identifier), ':', field('value', $._expression)),
    from_declaration: $ => seq(
      'from', field('file', $.string), ':', field('start', $.integer),
      optional(seq('-', field('end', $.integer))),
    ),

    edge: $ => seq(
      optional(seq('when', field('guard', $._expression))),
      '->',
      field('target', $.qualified_name),
      optional(field('assignments', $.assign_block)),
    ),
    assign_block: $ => seq('{', optional(commaSep1Trailing($.assignment)), '}'),
    assignment: $ => seq(
      field('target', $.qualified_name),
      field('operator', choice('=', '+=', '-=')),
      field('value', $._expression),
    ),

    terminal: $ => seq(
      'terminal',
      field('name', $.identifier),
      ':',
      field('outcome', alias($.identifier, $.outcome)),
      optional(field('body', $.terminal_body)),
    ),
    fallback: $ => seq('fallback', optional(field('body', $.terminal_body))),
    terminal_body: $ => seq('{', repeat($._terminal_item), '}'),
    _terminal_item: $ => choice($.requires, $.doc_declaration, $.from_declaration),
    // evidence: variables that must hold values, and Boolean predicates over them and the world
    requires: $ => seq('requires', commaSep1($._expression)),

    // ------------------------------------------------------------ rules and fragments

    rule: $ => seq(
      'rule',
      choice($.rule_required, $.rule_order, $.rule_forbid, $.rule_ends, $.rule_reads),
      field('quote', $._string),
      optional($.from_declaration),
    ),
    rule_required: $ => seq('required', field('state', $.qualified_name)),
    rule_order: $ => seq('order', field('first', $.qualified_name), 'before', field('then', $.qualified_name)),
    rule_forbid: $ => seq('forbid', field('state', $.qualified_name)),
    rule_ends: $ => seq('ends', field('state', $.qualified_name), 'in', field('outcome', alias($.identifier, $.outcome))),
    rule_reads: $ => seq('reads', field('reader', $.qualified_name), 'from', field('writer', $.qualified_name)),

    // `tools` after `use` starts `use tools`; a fragment called `tools` can still be used
    use_declaration: $ => seq(
      'use',
      field('fragment', choice($.identifier, alias('tools', $.identifier))),
      'as',
      field('name', $.identifier),
      '(', optional(commaSep1Trailing($.binding)), ')',
      optional(field('exits', $.use_exits)),
    ),
    use_exits: $ => seq('->', '(', commaSep1Trailing($.binding), ')'),
    binding: $ => seq(field('name', $.identifier), ':', field('value', $.qualified_name)),

    qualified_name: $ => seq($.identifier, repeat(seq('.', $.identifier))),

    // ------------------------------------------------------------ expressions

    _expression: $ => choice(
      $.identifier,
      $.integer,
      $.float,
      $.string,
      $.triple_string,
      $.true,
      $.false,
      $.none,
      $.call_expression,
      $.list,
      $.set,
      $.parenthesized_expression,
      $.field_expression,
      $.index_expression,
      $.unary_expression,
      $.not_expression,
      $.binary_expression,
      $.comparison,
    ),

    binary_expression: $ => {
      const table = [
        [PREC.or, 'or'],
        [PREC.and, 'and'],
        [PREC.sum, choice('+', '-', '++')],
        [PREC.product, choice('*', '/', '%')],
      ];
      return choice(...table.map(([precedence, operator]) => prec.left(precedence, seq(
        field('left', $._expression),
        // @ts-ignore
        field('operator', operator),
        field('right', $._expression),
      ))));
    },

    // skillc's grammar does not chain comparisons; accepting `a < b < c` here only makes the highlighter lenient
    comparison: $ => prec.left(PREC.compare, seq(
      field('left', $._expression),
      field('operator', choice('==', '!=', '<', '<=', '>', '>=', 'in')),
      field('right', $._expression),
    )),

    not_expression: $ => prec(PREC.not, seq('not', field('argument', $._expression))),
    unary_expression: $ => prec(PREC.unary, seq('-', field('argument', $._expression))),

    field_expression: $ => prec(PREC.postfix, seq(
      field('object', $._expression), '.', field('field', $.identifier),
    )),
    index_expression: $ => prec(PREC.postfix, seq(
      field('object', $._expression), '[', field('index', $._expression), ']',
    )),
    call_expression: $ => seq(
      field('function', $.identifier),
      '(', optional(commaSep1($._expression)), ')',
    ),
    list: $ => seq('[', optional(commaSep1Trailing($._expression)), ']'),
    set: $ => seq('{', optional(commaSep1Trailing($._expression)), '}'),
    parenthesized_expression: $ => seq('(', $._expression, ')'),

    true: _ => 'true',
    false: _ => 'false',
    none: _ => 'none',

    // ------------------------------------------------------------ tokens

    _string: $ => choice($.string, $.triple_string),

    string: $ => seq(
      '"',
      repeat(choice($.string_content, $.escape_sequence)),
      token.immediate('"'),
    ),
    string_content: _ => token.immediate(prec(1, /[^"\\\r\n]+/)),
    escape_sequence: _ => token.immediate(/\\(u\{[0-9A-Fa-f]+\}|.)/),

    // """…""" holds any text, newlines included, and no escapes (skm.lark: TRIPLE_STRING)
    triple_string: _ => token(prec(2, /"""([^"]|"[^"]|""[^"])*"""/)),

    identifier: _ => /[A-Za-z_][A-Za-z0-9_]*/,
    integer: _ => /[0-9]+/,
    float: _ => /[0-9]+(\.[0-9]+([eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)/,

    comment: _ => token(seq('#', /[^\n]*/)),
  },
});
