// The Halo extension: starts `halo lsp` as the language server of .halo files. Everything
// the editor shows beyond colours (diagnostics, hover, completion, definitions, formatting,
// quick fixes) comes from it.
const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration('halo').get('path') || 'halo';
  const server = { command, args: ['lsp'], transport: TransportKind.stdio };
  client = new LanguageClient('halo', 'Halo', { run: server, debug: server }, {
    documentSelector: [{ scheme: 'file', language: 'halo' }, { scheme: 'untitled', language: 'halo' }],
  });
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
