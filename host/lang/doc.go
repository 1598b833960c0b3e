// Package lang owns the Halo language's text: the lexer, the parser, the syntax tree with
// positions (file, 1-based line, 1-based column in runes), and diagnostics. host/check
// resolves names and validates a parsed Program; host/runtime executes one.
//
// Parse never panics and never loops forever: any byte sequence yields a File (possibly
// with fewer declarations) and diagnostics for everything that did not parse.
package lang
