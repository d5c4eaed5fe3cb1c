// VS Code client for the skillc language server.
//
// Plain JavaScript, no build step. On the first `.skm` document it launches the
// configured server command (`skillc lsp` by default) and talks the Language
// Server Protocol with it over stdin/stdout; the server provides diagnostics,
// symbols, navigation, hover, formatting and completion.
'use strict';

const os = require('os');
const path = require('path');
const vscode = require('vscode');
const { LanguageClient, RevealOutputChannelOn } = require('vscode-languageclient/node');

const CLIENT_ID = 'skillc';
const CLIENT_NAME = 'skillc language server';

/** @type {LanguageClient | undefined} */
let client;
/** @type {vscode.OutputChannel | undefined} */
let outputChannel;

/** Expand `${workspaceFolder}`, `${userHome}` and a leading `~` in a configured path or argument. */
function expand(value) {
  const folders = vscode.workspace.workspaceFolders;
  const workspaceFolder = folders && folders.length > 0 ? folders[0].uri.fsPath : '';
  let out = String(value)
    .replace(/\$\{workspaceFolder\}/g, workspaceFolder)
    .replace(/\$\{userHome\}/g, os.homedir());
  if (out === '~' || out.startsWith('~/') || out.startsWith('~' + path.sep)) {
    out = path.join(os.homedir(), out.slice(1));
  }
  return out;
}

/** The server command from the settings `skillc.server.path` and `skillc.server.args`. */
function serverCommand() {
  const config = vscode.workspace.getConfiguration('skillc');
  const command = expand(config.get('server.path', 'skillc') || 'skillc');
  const args = (config.get('server.args', ['lsp']) || []).map(expand);
  return { command, args };
}

/** Build (but do not start) a client for `.skm` documents. */
function createClient() {
  const { command, args } = serverCommand();
  const folders = vscode.workspace.workspaceFolders;
  const cwd = folders && folders.length > 0 ? folders[0].uri.fsPath : undefined;

  // An Executable without `transport` is spoken to over stdio and gets no extra
  // `--stdio` argument: the command line is exactly `command ...args`.
  /** @type {import('vscode-languageclient/node').ServerOptions} */
  const serverOptions = {
    run: { command, args, options: { cwd } },
    debug: { command, args, options: { cwd } },
  };

  /** @type {import('vscode-languageclient/node').LanguageClientOptions} */
  const clientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'skm' },
      { scheme: 'untitled', language: 'skm' },
    ],
    synchronize: {
      // Imports, skillc.toml and the project root markers change what a file means.
      fileEvents: vscode.workspace.createFileSystemWatcher('**/{*.skm,skillc.toml}'),
    },
    outputChannel,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
  };

  return new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
}

async function startClient() {
  client = createClient();
  try {
    await client.start();
  } catch (err) {
    const { command, args } = serverCommand();
    const shown = [command, ...args].join(' ');
    const message = err && err.message ? err.message : String(err);
    outputChannel.appendLine(`Could not start \`${shown}\`: ${message}`);
    const choice = await vscode.window.showErrorMessage(
      `skillc: could not start the language server (\`${shown}\`). Install it with ` +
        `\`pip install 'skillc[lsp]'\` or set "skillc.server.path".`,
      'Open Settings',
      'Show Output',
    );
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'skillc.server');
    } else if (choice === 'Show Output') {
      outputChannel.show(true);
    }
  }
}

async function stopClient() {
  const current = client;
  client = undefined;
  if (!current) {
    return;
  }
  try {
    await current.stop();
  } catch (err) {
    // A server that failed to start cannot be stopped; nothing left to clean up.
  }
}

async function restartClient() {
  await stopClient();
  await startClient();
}

/** @param {vscode.ExtensionContext} context */
async function activate(context) {
  outputChannel = vscode.window.createOutputChannel('skillc');
  context.subscriptions.push(outputChannel);
  context.subscriptions.push(vscode.commands.registerCommand('skillc.restartServer', restartClient));
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('skillc.server')) {
        restartClient();
      }
    }),
  );
  await startClient();
}

function deactivate() {
  return stopClient();
}

module.exports = { activate, deactivate, serverCommand, expand };
