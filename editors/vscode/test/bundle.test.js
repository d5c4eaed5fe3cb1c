// The bundled extension (dist/extension.js, `npm run bundle`) against the real skillc language server.
//
// An integration test in a real VS Code (@vscode/test-electron) needs a VS Code download, which is not
// possible offline; instead this loads the bundle itself with a minimal `vscode` stand-in, takes the
// server command it computes from the settings, starts that server and speaks LSP to it with
// vscode-jsonrpc (the library the bundled client is built on): initialize, diagnostics, hover, format,
// shutdown. SKILLC_PYTHON names the Python that has skillc installed (default: python3).
'use strict';

const assert = require('node:assert/strict');
const cp = require('node:child_process');
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const { test } = require('node:test');
const rpc = require('vscode-jsonrpc/node');

const ROOT = path.resolve(__dirname, '..');
const BUNDLE = path.join(ROOT, 'dist', 'extension.js');
const PYTHON = process.env.SKILLC_PYTHON || 'python3';
const BROKEN = [
  'machine m {', '  var answer: str', '  start think', '', '  model think {', '    writes answr',
  '    prompt "p"', '    -> done', '  }', '', '  terminal done: success { requires answer }', '  fallback', '}', '',
].join('\n');

/** Anything: a constructible, callable stand-in for the parts of the VS Code API the client touches at load. */
function anything() {
  const f = function () {};
  return new Proxy(f, {
    get: (target, key) => (key === 'prototype' ? target.prototype : typeof key === 'symbol' ? undefined : anything()),
  });
}

function loadBundle(settings) {
  // Only `vscode` is left outside the bundle; everything else must be inside it.
  const known = {
    workspace: {
      workspaceFolders: [{ uri: { fsPath: ROOT } }],
      getConfiguration: () => ({ get: (key, dflt) => (key in settings ? settings[key] : dflt) }),
    },
  };
  const fakeVscode = new Proxy(known, { get: (target, key) => (key in target ? target[key] : anything()) });
  const resolve = Module._resolveFilename;
  const seen = [];
  Module._resolveFilename = function (request, parent, ...rest) {
    if (request === 'vscode') {
      return 'vscode';
    }
    if (request !== BUNDLE && !request.startsWith('node:') && !Module.builtinModules.includes(request)) {
      seen.push(request);
    }
    return resolve.call(this, request, parent, ...rest);
  };
  require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: fakeVscode };
  try {
    delete require.cache[BUNDLE];
    return { extension: require(BUNDLE), external: seen };
  } finally {
    Module._resolveFilename = resolve;
  }
}

test('the bundle is one file that needs only vscode and Node built-ins', () => {
  assert.ok(fs.existsSync(BUNDLE), 'run `npm run bundle` first');
  const { extension, external } = loadBundle({});
  assert.deepEqual(external, []);
  assert.equal(typeof extension.activate, 'function');
  assert.equal(typeof extension.deactivate, 'function');
  const manifest = require('../package.json');
  assert.equal(path.resolve(ROOT, manifest.main), BUNDLE);
});

test('the server command of the bundle starts the real skillc language server', async () => {
  const { extension } = loadBundle({ 'server.path': PYTHON, 'server.args': ['-m', 'skillc', 'lsp'] });
  const { command, args } = extension.serverCommand();
  const server = cp.spawn(command, args, { cwd: path.resolve(ROOT, '..', '..'), stdio: ['pipe', 'pipe', 'inherit'] });
  const connection = rpc.createMessageConnection(
    new rpc.StreamMessageReader(server.stdout), new rpc.StreamMessageWriter(server.stdin));
  const published = new Promise((resolve) => {
    connection.onNotification('textDocument/publishDiagnostics', resolve);
  });
  connection.listen();
  try {
    const init = await connection.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
    for (const feature of ['hoverProvider', 'documentFormattingProvider', 'definitionProvider', 'completionProvider']) {
      assert.ok(init.capabilities[feature], feature);
    }
    await connection.sendNotification('initialized', {});
    const uri = 'file:///tmp/skillc%20bundle%20test.skm';
    await connection.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'skm', version: 1, text: BROKEN },
    });
    const diagnostics = await published;
    assert.equal(diagnostics.uri, uri);
    assert.deepEqual(diagnostics.diagnostics.map((d) => d.code), ['SKM103']);
    assert.match(diagnostics.diagnostics[0].message, /did you mean `answer`/);
    const hover = await connection.sendRequest('textDocument/hover', {
      textDocument: { uri }, position: { line: 4, character: 9 },
    });
    assert.match(hover.contents.value, /model/);
    const edits = await connection.sendRequest('textDocument/formatting', {
      textDocument: { uri }, options: { tabSize: 2, insertSpaces: true },
    });
    assert.ok(Array.isArray(edits));
    await connection.sendRequest('shutdown');
    await connection.sendNotification('exit');
    const code = await new Promise((resolve) => server.on('exit', resolve));
    assert.equal(code, 0);
  } finally {
    connection.dispose();
    server.kill();
  }
});
