// Package lsp owns Halo's language server, which `halo lsp` runs over stdin and stdout:
// diagnostics as a person types (the checks of `halo validate`, debounced), hover, completion,
// go to definition and find references for every declared name, document symbols,
// formatting (host/lang's Format) and code actions that apply the diagnostics' suggested
// replacements. The protocol's types and dispatch are github.com/tliron/glsp's; a guard in
// front of them reads each message within limits, so a malformed one is answered or logged
// and never ends the session.
//
// The server checks a document as `halo validate` checks the folder it is in: with the other
// .halo files of that folder (their open text where the editor has them open) as one
// program, against the providers the caller's Config.Project says the folder may declare.
package lsp
