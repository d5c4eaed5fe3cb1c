// Unit tests for src/extension.js with stand-ins for `vscode` and `vscode-languageclient/node`
// (neither VS Code nor the skillc server is needed): `node --test test/extension.test.js`.
'use strict';

const assert = require('node:assert/strict');
const Module = require('node:module');
const os = require('node:os');
const path = require('node:path');
const { test, beforeEach } = require('node:test');

const manifest = require('../package.json');

// ------------------------------------------------------------------ stand-ins

const state = {};

function reset(settings = {}) {
  state.settings = settings;
  state.clients = [];
  state.errors = [];
  state.commands = {};
  state.configListeners = [];
  state.startError = undefined;
  state.workspaceFolders = [{ uri: { fsPath: '/proj' } }];
}

class FakeLanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    Object.assign(this, { id, name, serverOptions, clientOptions, started: 0, stopped: 0 });
    state.clients.push(this);
  }
  async start() {
    this.started += 1;
    if (state.startError) {
      throw state.startError;
    }
  }
  async stop() {
    this.stopped += 1;
  }
}

const fakeVscode = {
  workspace: {
    get workspaceFolders() {
      return state.workspaceFolders;
    },
    getConfiguration(section) {
      assert.equal(section, 'skillc');
      return { get: (key, dflt) => (key in state.settings ? state.settings[key] : dflt) };
    },
    createFileSystemWatcher: (glob) => ({ glob, dispose() {} }),
    onDidChangeConfiguration(listener) {
      state.configListeners.push(listener);
      return { dispose() {} };
    },
  },
  window: {
    createOutputChannel: (name) => ({ name, lines: [], appendLine(l) { this.lines.push(l); }, show() {}, dispose() {} }),
    showErrorMessage: async (message) => {
      state.errors.push(message);
      return undefined;
    },
  },
  commands: {
    registerCommand(id, fn) {
      state.commands[id] = fn;
      return { dispose() {} };
    },
    executeCommand: async () => undefined,
  },
};

const fakeClientModule = { LanguageClient: FakeLanguageClient, RevealOutputChannelOn: { Never: 4 } };

const originalLoad = Module._load;
Module._load = function load(request, parent, isMain) {
  if (request === 'vscode') return fakeVscode;
  if (request === 'vscode-languageclient/node') return fakeClientModule;
  return originalLoad.call(this, request, parent, isMain);
};
const extension = require('../src/extension.js');

function context() {
  return { subscriptions: [] };
}

beforeEach(() => reset());

// ------------------------------------------------------------------ tests

test('the manifest entry point is this module and contributes its settings and command', () => {
  // The entry point is this module bundled by esbuild (`npm run bundle`; test/bundle.test.js loads it).
  assert.equal(path.resolve(__dirname, '..', manifest.main), path.resolve(__dirname, '..', 'dist', 'extension.js'));
  assert.match(manifest.scripts.bundle, /^esbuild src\/extension\.js --bundle --outfile=dist\/extension\.js /);
  assert.deepEqual(manifest.activationEvents, ['onLanguage:skm']);
  const props = manifest.contributes.configuration.properties;
  assert.equal(props['skillc.server.path'].default, 'skillc');
  assert.deepEqual(props['skillc.server.args'].default, ['lsp']);
  assert.deepEqual(manifest.contributes.commands.map((c) => c.command), ['skillc.restartServer']);
});

test('activate launches `skillc lsp` over stdio for skm documents', async () => {
  const ctx = context();
  await extension.activate(ctx);
  assert.equal(state.clients.length, 1);
  const client = state.clients[0];
  assert.equal(client.id, 'skillc');
  assert.equal(client.started, 1);
  for (const mode of ['run', 'debug']) {
    const exe = client.serverOptions[mode];
    assert.equal(exe.command, 'skillc');
    assert.deepEqual(exe.args, ['lsp']);
    assert.equal(exe.transport, undefined, 'no transport: stdio without an extra --stdio argument');
    assert.equal(exe.options.cwd, '/proj');
  }
  const languages = client.clientOptions.documentSelector.map((s) => s.language);
  assert.deepEqual([...new Set(languages)], ['skm']);
  assert.ok('skillc.restartServer' in state.commands);
  assert.ok(ctx.subscriptions.length >= 3);
  await extension.deactivate();
  assert.equal(client.stopped, 1);
});

test('settings choose the command; ${workspaceFolder} and ~ are expanded', async () => {
  reset({ 'server.path': '${workspaceFolder}/.venv/bin/skillc', 'server.args': ['lsp', '--log', '~/skillc.log'] });
  await extension.activate(context());
  const exe = state.clients[0].serverOptions.run;
  assert.equal(exe.command, '/proj/.venv/bin/skillc');
  assert.deepEqual(exe.args, ['lsp', '--log', path.join(os.homedir(), 'skillc.log')]);
  await extension.deactivate();
});

test('changing skillc.server settings restarts the server; other settings do not', async () => {
  await extension.activate(context());
  const [listener] = state.configListeners;
  listener({ affectsConfiguration: (s) => s === 'editor.tabSize' });
  await new Promise((r) => setImmediate(r));
  assert.equal(state.clients.length, 1);
  listener({ affectsConfiguration: (s) => s === 'skillc.server' });
  await new Promise((r) => setImmediate(r));
  assert.equal(state.clients.length, 2);
  assert.equal(state.clients[0].stopped, 1);
  assert.equal(state.clients[1].started, 1);
  await state.commands['skillc.restartServer']();
  assert.equal(state.clients.length, 3);
  await extension.deactivate();
  assert.equal(state.clients[2].stopped, 1);
});

test('a server that cannot start is reported with a hint, and deactivate still succeeds', async () => {
  state.startError = new Error('spawn skillc ENOENT');
  await extension.activate(context());
  assert.equal(state.errors.length, 1);
  assert.match(state.errors[0], /skillc lsp/);
  assert.match(state.errors[0], /skillc\.server\.path/);
  await extension.deactivate();
});
