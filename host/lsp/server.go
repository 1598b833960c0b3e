package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/internal/safefile"
)

// DefaultDebounce is how long after the last change a document is checked again.
const DefaultDebounce = 150 * time.Millisecond

// Config is what the server is told by its caller.
type Config struct {
	// Project returns what the program of the .halo files in folder dir may declare, as
	// halo validate decides it: the tool registry (the built-ins, MCP and the providers of
	// the folder's halo.lock) and diagnostics of the project's own files (a halo.lock or
	// halo.json that halo run would refuse). It is called again only when the folder's
	// halo.lock or halo.json changes.
	Project func(dir string) (*tool.Registry, lang.Diagnostics)
	// Debounce is how long after the last change a document is checked; 0 means
	// DefaultDebounce.
	Debounce time.Duration
	// Logger gets what the server logs (never the protocol's stream); nil logs nothing.
	Logger hclog.Logger
	// Version is the server's version, told to the client.
	Version string
}

// Serve speaks the Language Server Protocol on in and out until the client sends exit, in
// ends, or ctx is cancelled. It never returns early for a malformed message or a file that
// does not parse.
func Serve(ctx context.Context, in io.Reader, out io.Writer, cfg Config) error {
	if cfg.Debounce <= 0 {
		cfg.Debounce = DefaultDebounce
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	s := newServer(cfg)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.run(ctx)
	}()
	serveConn(ctx, newGuard(in, out), guarded{Handler: s.handler(), log: cfg.Logger}, cfg.Logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}))
	cancel()
	wg.Wait()
	return nil
}

type server struct {
	cfg Config

	mu sync.Mutex
	// docs are the open documents by URI.
	docs map[protocol.DocumentUri]*document
	// due is when each folder's documents are to be checked next.
	due    map[string]time.Time
	notify func(method string, params any)
	// projects caches Project's answer per folder.
	projects map[string]*project

	wake chan struct{}
}

// A document is one open file's text as the editor has it.
type document struct {
	uri     protocol.DocumentUri
	path    string // the file's path; "" for a document that is no file (untitled:)
	version protocol.Integer
	text    []byte
}

// A project is Project's answer for one folder, with what it was computed from.
type project struct {
	stamp string
	reg   *tool.Registry
	diags lang.Diagnostics
}

func newServer(cfg Config) *server {
	return &server{cfg: cfg, docs: map[protocol.DocumentUri]*document{}, due: map[string]time.Time{},
		projects: map[string]*project{}, wake: make(chan struct{}, 1)}
}

func boolp(b bool) *bool { return &b }

// handler wires the protocol's methods to the server. Every handler recovers from a panic
// (a bug), so that one request failing never ends the session.
func (s *server) handler() *protocol.Handler {
	h := &protocol.Handler{}
	h.Initialize = func(ctx *glsp.Context, p *protocol.InitializeParams) (r any, err error) {
		defer s.recover(&err)
		s.mu.Lock()
		s.notify = ctx.Notify
		s.mu.Unlock()
		// Incremental: an edit sends only what changed, not the whole text again (decoding a
		// large file's text at each keystroke would cost more than checking it).
		kind := protocol.TextDocumentSyncKindIncremental
		version := s.cfg.Version
		return protocol.InitializeResult{
			Capabilities: protocol.ServerCapabilities{
				TextDocumentSync:           protocol.TextDocumentSyncOptions{OpenClose: boolp(true), Change: &kind},
				HoverProvider:              true,
				CompletionProvider:         &protocol.CompletionOptions{TriggerCharacters: []string{".", "[", "(", " "}},
				DefinitionProvider:         true,
				ReferencesProvider:         true,
				DocumentSymbolProvider:     true,
				DocumentFormattingProvider: true,
				CodeActionProvider:         protocol.CodeActionOptions{CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix}},
			},
			ServerInfo: &protocol.InitializeResultServerInfo{Name: "halo", Version: &version},
		}, nil
	}
	h.Initialized = func(*glsp.Context, *protocol.InitializedParams) error { return nil }
	h.Shutdown = func(*glsp.Context) error { return nil }
	h.SetTrace = func(*glsp.Context, *protocol.SetTraceParams) error { return nil }
	h.TextDocumentDidOpen = func(_ *glsp.Context, p *protocol.DidOpenTextDocumentParams) (err error) {
		defer s.recover(&err)
		s.open(p.TextDocument.URI, p.TextDocument.Version, []byte(p.TextDocument.Text), true)
		return nil
	}
	h.TextDocumentDidChange = func(_ *glsp.Context, p *protocol.DidChangeTextDocumentParams) (err error) {
		defer s.recover(&err)
		for _, c := range p.ContentChanges {
			switch c := c.(type) {
			case protocol.TextDocumentContentChangeEventWhole:
				s.open(p.TextDocument.URI, p.TextDocument.Version, []byte(c.Text), false)
			case protocol.TextDocumentContentChangeEvent:
				s.edit(p.TextDocument.URI, p.TextDocument.Version, c)
			}
		}
		return nil
	}
	h.TextDocumentDidSave = func(*glsp.Context, *protocol.DidSaveTextDocumentParams) error { return nil }
	h.TextDocumentDidClose = func(_ *glsp.Context, p *protocol.DidCloseTextDocumentParams) (err error) {
		defer s.recover(&err)
		s.close(p.TextDocument.URI)
		return nil
	}
	h.TextDocumentHover = func(_ *glsp.Context, p *protocol.HoverParams) (r *protocol.Hover, err error) {
		defer s.recover(&err)
		return s.hover(p.TextDocument.URI, p.Position), nil
	}
	h.TextDocumentCompletion = func(_ *glsp.Context, p *protocol.CompletionParams) (r any, err error) {
		defer s.recover(&err)
		return s.complete(p.TextDocument.URI, p.Position), nil
	}
	h.TextDocumentDefinition = func(_ *glsp.Context, p *protocol.DefinitionParams) (r any, err error) {
		defer s.recover(&err)
		if loc := s.definition(p.TextDocument.URI, p.Position); loc != nil {
			return *loc, nil
		}
		return nil, nil
	}
	h.TextDocumentReferences = func(_ *glsp.Context, p *protocol.ReferenceParams) (r []protocol.Location, err error) {
		defer s.recover(&err)
		return s.references(p.TextDocument.URI, p.Position, p.Context.IncludeDeclaration), nil
	}
	h.TextDocumentDocumentSymbol = func(_ *glsp.Context, p *protocol.DocumentSymbolParams) (r any, err error) {
		defer s.recover(&err)
		return s.symbols(p.TextDocument.URI), nil
	}
	h.TextDocumentFormatting = func(_ *glsp.Context, p *protocol.DocumentFormattingParams) (r []protocol.TextEdit, err error) {
		defer s.recover(&err)
		return s.format(p.TextDocument.URI)
	}
	h.TextDocumentCodeAction = func(_ *glsp.Context, p *protocol.CodeActionParams) (r any, err error) {
		defer s.recover(&err)
		return s.codeActions(p.TextDocument.URI, p.Range), nil
	}
	return h
}

// guarded is the protocol's handler, with the answers to what the guard could not pass on.
type guarded struct {
	*protocol.Handler
	log hclog.Logger
}

func (g guarded) Handle(ctx *glsp.Context) (r any, validMethod, validParams bool, err error) {
	switch ctx.Method {
	case methodInvalidRequest, methodInvalidMessage:
		var p struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(ctx.Params, &p)
		g.log.Warn("lsp: a malformed message", "error", p.Error)
		return nil, true, true, errors.New("malformed message: " + p.Error)
	}
	return g.Handler.Handle(ctx)
}

// recover turns a panic of a handler into its error, and logs it.
func (s *server) recover(err *error) {
	if r := recover(); r != nil {
		s.cfg.Logger.Error("lsp: a handler failed", "panic", r, "stack", string(debug.Stack()))
		*err = fmt.Errorf("internal error: %v", r)
	}
}

// URIPath returns the file path of a file: URI, or "" for any other.
func URIPath(uri protocol.DocumentUri) string {
	u, err := url.Parse(string(uri))
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}

// PathURI returns the file: URI of an absolute path.
func PathURI(path string) protocol.DocumentUri {
	return protocol.DocumentUri((&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String())
}

// folder is the folder whose program a document belongs to: its file's folder, or "" for a
// document that is no file (it is then a program of its own).
func (d *document) folder() string {
	if d.path == "" {
		return ""
	}
	return filepath.Dir(d.path)
}

// name is how the document's file is named in positions: its path, or its URI.
func (d *document) name() string {
	if d.path != "" {
		return d.path
	}
	return string(d.uri)
}

func (s *server) open(uri protocol.DocumentUri, version protocol.Integer, text []byte, opened bool) {
	s.mu.Lock()
	d := s.docs[uri]
	if d == nil {
		d = &document{uri: uri, path: URIPath(uri)}
		s.docs[uri] = d
	}
	d.version, d.text = version, text
	delay := s.cfg.Debounce
	if opened {
		delay = 0 // a file just opened is checked at once
	}
	s.schedule(d.folder(), delay)
	s.mu.Unlock()
}

// edit applies an incremental change: the range's text replaced by the change's.
func (s *server) edit(uri protocol.DocumentUri, version protocol.Integer, c protocol.TextDocumentContentChangeEvent) {
	s.mu.Lock()
	d := s.docs[uri]
	if d == nil || c.Range == nil {
		s.mu.Unlock()
		return
	}
	idx := lang.NewLineIndex(d.text)
	from, to := offsetOf(d.text, idx, c.Range.Start), offsetOf(d.text, idx, c.Range.End)
	if to < from {
		from, to = to, from
	}
	text := append(append(append([]byte(nil), d.text[:from]...), c.Text...), d.text[to:]...)
	s.mu.Unlock()
	s.open(uri, version, text, false)
}

func (s *server) close(uri protocol.DocumentUri) {
	s.mu.Lock()
	d := s.docs[uri]
	delete(s.docs, uri)
	notify := s.notify
	s.mu.Unlock()
	if d != nil && notify != nil {
		notify(protocol.ServerTextDocumentPublishDiagnostics, protocol.PublishDiagnosticsParams{URI: uri, Diagnostics: []protocol.Diagnostic{}})
		s.mu.Lock()
		s.schedule(d.folder(), s.cfg.Debounce) // its folder's other documents read it from disk now
		s.mu.Unlock()
	}
}

// schedule asks for folder's documents to be checked after delay, or sooner when they
// already were to be. Called with s.mu held.
func (s *server) schedule(folder string, delay time.Duration) {
	at := time.Now().Add(delay)
	if due, ok := s.due[folder]; !ok || at.Before(due) || delay > 0 {
		s.due[folder] = at
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run checks folders as they come due, until ctx ends.
func (s *server) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		now := time.Now()
		var ready []string
		next := time.Duration(-1)
		for folder, at := range s.due {
			if !at.After(now) {
				ready = append(ready, folder)
				delete(s.due, folder)
			} else if wait := at.Sub(now); next < 0 || wait < next {
				next = wait
			}
		}
		s.mu.Unlock()
		sort.Strings(ready)
		for _, folder := range ready {
			s.publish(folder)
		}
		if len(ready) > 0 {
			continue
		}
		if next < 0 {
			next = time.Hour
		}
		timer.Reset(next)
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// publish checks folder's program and sends each of its open documents its diagnostics.
func (s *server) publish(folder string) {
	res := s.check(folder)
	s.mu.Lock()
	notify := s.notify
	// A document's version changes under s.mu as the editor types, so it is read here, once.
	type open struct {
		doc     *document
		version protocol.Integer
	}
	var docs []open
	for _, d := range s.docs {
		if d.folder() == folder {
			docs = append(docs, open{d, d.version})
		}
	}
	s.mu.Unlock()
	if notify == nil {
		return
	}
	for _, o := range docs {
		d := o.doc
		if v, ok := res.versions[d.uri]; !ok || v != o.version {
			continue // changed since: a check of the new text is due
		}
		version := protocol.UInteger(max(0, o.version))
		notify(protocol.ServerTextDocumentPublishDiagnostics, protocol.PublishDiagnosticsParams{
			URI: d.uri, Version: &version, Diagnostics: res.lsp(d),
		})
	}
}

// A result is one check of a folder's program.
type result struct {
	prog     *lang.Program
	diags    lang.Diagnostics
	reg      *tool.Registry
	versions map[protocol.DocumentUri]protocol.Integer
	// texts are the checked texts by file name, for converting positions.
	texts map[string][]byte
	docs  map[string]*document
	// unread says which files of the folder could not be read.
	unread lang.Diagnostics
}

// load reads folder's program: the .halo files in it, with the text of the open ones as the
// editor has it. A file that cannot be read is a diagnostic of each open document (what it
// declares is then unknown).
func (s *server) load(folder string) *result {
	res := &result{versions: map[protocol.DocumentUri]protocol.Integer{}, texts: map[string][]byte{}, docs: map[string]*document{}}
	s.mu.Lock()
	for _, d := range s.docs {
		if d.folder() == folder {
			res.versions[d.uri] = d.version
			res.texts[d.name()] = d.text
			res.docs[d.name()] = d
		}
	}
	s.mu.Unlock()
	if folder != "" {
		files, err := lang.Expand("", folder)
		if err != nil {
			res.unread.Add(lang.Pos{}, lang.Error, lang.CodeIO, "%v", err)
		}
		for _, path := range files {
			if _, open := res.texts[path]; open {
				continue
			}
			b, err := safefile.Read(path, lang.MaxSourceBytes)
			if err != nil {
				res.unread.Add(lang.Pos{}, lang.Error, lang.CodeIO, "%s cannot be read, so what it declares is unknown here: %v", filepath.Base(path), unwrap(err))
				continue
			}
			res.texts[path] = b
		}
	}
	names := make([]string, 0, len(res.texts))
	for name := range res.texts {
		names = append(names, name)
	}
	sort.Strings(names)
	srcs := make([]lang.Source, 0, len(names))
	for _, name := range names {
		srcs = append(srcs, lang.Source{Name: name, Src: res.texts[name]})
	}
	res.prog, res.diags = lang.ParseFiles(srcs)
	return res
}

// check loads and validates folder's program as halo validate would check the folder.
func (s *server) check(folder string) *result {
	res := s.load(folder)
	reg, pdiags := s.project(folder)
	diags := append(res.diags, runtime.Validate(res.prog, reg)...)
	diags.Sort()
	diags.Locate(res.prog.Source)
	// What belongs to no open document (halo.lock, a file that cannot be read) is shown at
	// the start of each.
	for _, d := range append(res.unread, pdiags...) {
		for name := range res.docs {
			at := d
			at.Message = strings.TrimSpace(fileLabel(d.File) + d.Message)
			at.Pos = lang.Pos{File: name, Line: 1, Col: 1}
			at.Start, at.End = nil, nil
			diags = append(diags, at)
		}
	}
	res.diags, res.reg = diags, reg
	return res
}

func fileLabel(file string) string {
	if file == "" {
		return ""
	}
	return filepath.Base(file) + ": "
}

func unwrap(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// project returns Project's answer for folder, computed again only when its halo.lock or
// halo.json changed.
func (s *server) project(folder string) (*tool.Registry, lang.Diagnostics) {
	if s.cfg.Project == nil {
		return nil, nil
	}
	stamp := projectStamp(folder)
	s.mu.Lock()
	p := s.projects[folder]
	s.mu.Unlock()
	if p != nil && p.stamp == stamp {
		return p.reg, p.diags
	}
	reg, diags := s.cfg.Project(folder)
	s.mu.Lock()
	s.projects[folder] = &project{stamp: stamp, reg: reg, diags: diags}
	s.mu.Unlock()
	return reg, diags
}

// projectStamp changes when a file the project's answer is read from does.
func projectStamp(folder string) string {
	var b strings.Builder
	for _, name := range []string{"halo.lock", "halo.json"} {
		if st, err := os.Stat(filepath.Join(folder, name)); err == nil {
			fmt.Fprintf(&b, "%s %d %d;", name, st.Size(), st.ModTime().UnixNano())
		}
	}
	return b.String()
}

// lsp returns the diagnostics of d's file as the protocol carries them.
func (r *result) lsp(d *document) []protocol.Diagnostic {
	out := []protocol.Diagnostic{}
	text := r.texts[d.name()]
	idx := lang.NewLineIndex(text)
	for _, diag := range r.diags {
		if diag.File != d.name() {
			continue
		}
		out = append(out, toLSP(diag, text, idx))
	}
	return out
}

var source = "halo"

// toLSP converts one diagnostic; one without a span is the whole first character of its line.
func toLSP(d lang.Diagnostic, text []byte, idx *lang.LineIndex) protocol.Diagnostic {
	sev := protocol.DiagnosticSeverityError
	if d.Severity == lang.Warning {
		sev = protocol.DiagnosticSeverityWarning
	}
	msg := d.Message
	if d.Help != "" {
		msg += "\nhelp: " + d.Help
	}
	return protocol.Diagnostic{
		Range:    diagRange(d, text, idx),
		Severity: &sev,
		Code:     &protocol.IntegerOrString{Value: d.Code},
		Source:   &source,
		Message:  msg,
	}
}

func diagRange(d lang.Diagnostic, text []byte, idx *lang.LineIndex) protocol.Range {
	if d.Start != nil && d.End != nil {
		return protocol.Range{Start: position(text, idx, *d.Start), End: position(text, idx, *d.End)}
	}
	line := max(1, int(d.Line))
	start := idx.Location(text, idx.Offset(text, line, max(1, int(d.Col))))
	return protocol.Range{Start: position(text, idx, start), End: position(text, idx, start)}
}
