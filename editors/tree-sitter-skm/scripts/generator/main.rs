// The parser generator of tree-sitter 0.20.8 (cli/src/generate, MIT), built alone: `tree-sitter-generate DIR`
// runs DIR/grammar.js through node and writes DIR/src/{grammar.json,parser.c,node-types.json,tree_sitter/parser.h}.
mod tree_sitter {
    pub const LANGUAGE_VERSION: usize = 14;
    pub const PARSER_HEADER: &'static str = include_str!("../parser.h");
}
mod generate;

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    if let Err(e) = generate::generate_parser_in_directory(&dir, None, tree_sitter::LANGUAGE_VERSION, false, None) {
        eprintln!("{:?}", e);
        std::process::exit(1);
    }
}
