// The Halo extension: starts `halo lsp` as the language server of .halo files, and
// `halo debug --dap` as the debug adapter of launch configurations of type "halo".
// Everything the editor shows beyond colours (diagnostics, hover, completion, definitions,
// formatting, quick fixes; breakpoints, stops, variables) comes from them.
const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

function haloCommand() {
  return vscode.workspace.getConfiguration('halo').get('path') || 'halo';
}

function activate(context) {
  const command = haloCommand();
  const server = { command, args: ['lsp'], transport: TransportKind.stdio };
  client = new LanguageClient('halo', 'Halo', { run: server, debug: server }, {
    documentSelector: [{ scheme: 'file', language: 'halo' }, { scheme: 'untitled', language: 'halo' }],
  });
  context.subscriptions.push({ dispose: () => client && client.stop() });
  context.subscriptions.push(vscode.debug.registerDebugAdapterDescriptorFactory('halo', {
    createDebugAdapterDescriptor: () => new vscode.DebugAdapterExecutable(haloCommand(), ['debug', '--dap']),
  }));
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
