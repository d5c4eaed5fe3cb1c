#!/bin/sh
# Build tree-sitter 0.20.8's parser generator alone, offline, when npm's tree-sitter-cli cannot be installed
# (its install script downloads the binary from GitHub). Needs a checkout of the tree-sitter repository at tag
# v0.20.8 and Rust with the crates of Debian's packages:
#   apt-get install cargo librust-anyhow-dev librust-lazy-static-dev librust-regex-dev librust-regex-syntax-dev \
#     librust-rustc-hash-dev librust-semver-dev librust-serde-dev librust-serde-derive-dev librust-serde-json-dev \
#     librust-smallbitvec-dev librust-indexmap-dev librust-log-dev librust-aho-corasick-dev librust-ryu-dev \
#     librust-itoa-dev librust-syn-dev librust-unicode-ident-dev librust-hashbrown-dev librust-memchr-dev
# Usage: scripts/generator/build.sh TREE_SITTER_CHECKOUT [WORK_DIR]
#        WORK_DIR/target/release/tree-sitter-generate editors/tree-sitter-skm   # writes src/ as `generate` does
set -eu
src=${1:?the tree-sitter checkout (tag v0.20.8)}
work=${2:-${TMPDIR:-/tmp}/tree-sitter-generate}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work/src" "$work/.cargo"
cp -r "$src/cli/src/generate" "$work/src/generate"
cp "$src/lib/include/tree_sitter/parser.h" "$work/parser.h"
cp "$here/Cargo.toml" "$work/Cargo.toml"
cp "$here/main.rs" "$work/src/main.rs"
# Unicode property tables are only read for \p{…} classes, which grammar.js does not use.
[ -s "$work/src/generate/prepare_grammar/unicode-properties.json" ] || echo '{}' > "$work/src/generate/prepare_grammar/unicode-properties.json"
# Language bindings are not generated (--no-bindings): no templates, no binding version.
printf 'use anyhow::Result;\nuse std::path::Path;\npub fn generate_binding_files(_: &Path, _: &str) -> Result<()> { Ok(()) }\n' \
  > "$work/src/generate/binding_files.rs"
# The generator names the runtime crate's two constants; main.rs provides them as a module.
sed -i 's/\btree_sitter::\(LANGUAGE_VERSION\|PARSER_HEADER\)/crate::tree_sitter::\1/g' \
  "$work/src/generate/mod.rs" "$work/src/generate/render.rs"
printf '[source.crates-io]\nreplace-with = "debian"\n[source.debian]\ndirectory = "/usr/share/cargo/registry"\n[net]\noffline = true\n' \
  > "$work/.cargo/config.toml"
(cd "$work" && cargo build --release)
echo "$work/target/release/tree-sitter-generate"
