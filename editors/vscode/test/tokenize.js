// Tokenize .skm files with the extension's grammar in VS Code's own engine (vscode-textmate) and report
// text the grammar leaves unscoped, tokens scoped `invalid.*`, and files that end inside a string or block.
// Usage: node test/tokenize.js FILE...   (exit status 1 when a problem is found)
'use strict';

const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const GRAMMAR = path.join(__dirname, '..', 'syntaxes', 'skm.tmLanguage.json');

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) =>
      scopeName === 'source.skm' ? vsctm.parseRawGrammar(fs.readFileSync(GRAMMAR, 'utf8'), GRAMMAR) : null,
  });
  return registry.loadGrammar('source.skm');
}

function problems(grammar, file) {
  const found = [];
  let stack = vsctm.INITIAL;
  fs.readFileSync(file, 'utf8').split(/\r?\n/).forEach((line, i) => {
    const { tokens, ruleStack } = grammar.tokenizeLine(line, stack);
    for (const t of tokens) {
      const text = line.slice(t.startIndex, t.endIndex);
      const leaf = t.scopes[t.scopes.length - 1];
      if (text.trim() && (t.scopes.length === 1 || leaf.startsWith('invalid.'))) {
        found.push(`${file}:${i + 1}:${t.startIndex + 1}: ${JSON.stringify(text)} ${t.scopes.join(' ')}`);
      }
    }
    stack = ruleStack;
  });
  if (stack.depth > 1) {
    found.push(`${file}: ends inside a multi-line rule`);
  }
  return found;
}

async function main(files) {
  const grammar = await loadGrammar();
  const found = files.flatMap((file) => problems(grammar, file));
  found.forEach((p) => console.log(p));
  console.log(`${files.length} files, ${found.length} problems`);
  process.exitCode = found.length ? 1 : 0;
}

main(process.argv.slice(2));
