package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/lsp/lsptest"
	"halolang.dev/halo/host/tool"
)

// testProject is what halo lsp's caller says a folder may declare: a Workspace provider whose
// methods are known, and no lock problems.
func testProject(string) (*tool.Registry, lang.Diagnostics) {
	reg := tool.NewRegistry()
	_ = reg.Add(tool.Type{Name: "Workspace", Kind: tool.KindBuiltin, Description: "files of a folder", Methods: []tool.Method{
		{Name: "read", Effect: tool.Read, Description: "Read a file.", Params: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the file"}},"required":["path"]}`)},
		{Name: "write", Effect: tool.Write, Description: "Write a file."},
	}})
	_ = reg.Add(tool.Type{Name: "MCP", Kind: tool.KindMCP})
	return reg, nil
}

// session is a server run in-process on pipes, and a client of it.
type session struct {
	t      *testing.T
	c      *lsptest.Client
	in     *io.PipeWriter // what the server reads
	done   chan struct{}
	cancel context.CancelFunc
}

func start(t *testing.T, cfg Config) *session {
	t.Helper()
	if cfg.Project == nil {
		cfg.Project = testProject
	}
	if cfg.Debounce == 0 {
		cfg.Debounce = 10 * time.Millisecond
	}
	srvIn, clientOut := io.Pipe()
	clientIn, srvOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{t: t, in: clientOut, done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(s.done)
		Serve(ctx, srvIn, srvOut, cfg)
		srvOut.Close()
	}()
	s.c = lsptest.New(clientIn, clientOut)
	if _, err := s.c.Initialize(""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	return s
}

func (s *session) stop() {
	s.c.Close()
	s.cancel()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.t.Error("the server did not stop")
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const program = `policy Careful : AllowEffects(read) & MaxWords(50)

tool Files : Workspace(root: ".")

agent Helper [openai/gpt-4o, temp: 0.2]
  system "You help."
  equips Files
  requires Careful

pipeline Tidy(task: String) -> Result:
  task
    |> Files.read(path: task) as text
    |> Helper.work(text, tools: [Files])
`

// posOf is the protocol position of the nth (0-based) occurrence of needle in text, plus
// shift characters.
func posOf(t *testing.T, text, needle string, nth, shift int) protocol.Position {
	t.Helper()
	off := -1
	for i := 0; i <= nth; i++ {
		j := strings.Index(text[off+1:], needle)
		if j < 0 {
			t.Fatalf("%q not found %d times", needle, nth+1)
		}
		off += 1 + j
	}
	line := strings.Count(text[:off], "\n")
	col := off - (strings.LastIndex(text[:off], "\n") + 1)
	return protocol.Position{Line: protocol.UInteger(line), Character: protocol.UInteger(col + shift)}
}

func docPos(uri protocol.DocumentUri, p protocol.Position) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": uri}, "position": p}
}

// Diagnostics come as a person types: an error where it is, with its code and range, and a
// corrected text clears them.
func TestDiagnosticsAsYouType(t *testing.T) {
	s := start(t, Config{})
	dir := t.TempDir()
	uri := PathURI(filepath.Join(dir, "a.halo"))
	bad := strings.Replace(program, "equips Files", "equips Flies", 1)
	if err := s.c.Open(uri, 1, bad); err != nil {
		t.Fatal(err)
	}
	diags, err := s.c.Diagnostics(uri, 1, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(diags) != 1 || diags[0].Code != "UNDECLARED" || !strings.Contains(diags[0].Message, "did you mean Files?") {
		t.Fatalf("got %+v", diags)
	}
	want := protocol.Range{Start: posOf(t, bad, "Flies", 0, 0), End: posOf(t, bad, "Flies", 0, 5)}
	if diags[0].Range != want {
		t.Errorf("range %+v, want %+v", diags[0].Range, want)
	}
	// Several quick edits are checked once the typing stops; the last text counts.
	for v := 2; v <= 4; v++ {
		if err := s.c.Change(uri, v, program); err != nil {
			t.Fatal(err)
		}
	}
	diags, err = s.c.Diagnostics(uri, 4, 10*time.Second)
	if err != nil || len(diags) != 0 {
		t.Fatalf("after the fix: %+v %v", diags, err)
	}
	// An edit of a range, as editors send them: "Files" on the equips line becomes "Fils".
	at := posOf(t, program, "Files", 1, 3)
	if err := s.c.Edit(uri, 5, at, protocol.Position{Line: at.Line, Character: at.Character + 1}, ""); err != nil {
		t.Fatal(err)
	}
	diags, err = s.c.Diagnostics(uri, 5, 10*time.Second)
	if err != nil || len(diags) != 1 || !strings.Contains(diags[0].Message, "undeclared tool Fils") {
		t.Fatalf("after a range edit: %+v %v", diags, err)
	}
}

// A document is checked with the other .halo files of its folder, as halo validate checks
// the folder: a name declared in a file beside it resolves, and go to definition reaches it.
// A file of the folder that cannot be read is a diagnostic, not a crash.
func TestFolderProgram(t *testing.T) {
	s := start(t, Config{})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tools.halo"), "tool Files : Workspace(root: \".\")\n")
	text := "agent Helper [openai/gpt-4o]\n  equips Files\n"
	uri := PathURI(filepath.Join(dir, "agent.halo"))
	s.c.Open(uri, 1, text)
	if diags, err := s.c.Diagnostics(uri, 1, 10*time.Second); err != nil || len(diags) != 0 {
		t.Fatalf("%+v %v", diags, err)
	}
	var loc protocol.Location
	if err := s.c.Call("textDocument/definition", docPos(uri, posOf(t, text, "Files", 0, 1)), &loc); err != nil {
		t.Fatal(err)
	}
	if loc.URI != PathURI(filepath.Join(dir, "tools.halo")) || loc.Range.Start != (protocol.Position{Line: 0, Character: 5}) || loc.Range.End.Character != 10 {
		t.Errorf("definition: %+v", loc)
	}

	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.halo"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.c.Change(uri, 2, text+"\n")
	diags, err := s.c.Diagnostics(uri, 2, 10*time.Second)
	if err != nil || len(diags) != 1 || !strings.Contains(diags[0].Message, "pipe.halo cannot be read") || diags[0].Code != "IO" {
		t.Fatalf("unreadable file: %+v %v", diags, err)
	}
}

func TestHover(t *testing.T) {
	s := start(t, Config{})
	uri := PathURI(filepath.Join(t.TempDir(), "a.halo"))
	s.c.Open(uri, 1, program)
	for _, tt := range []struct {
		needle string
		nth    int
		want   []string
	}{
		{"read(", 0, []string{"**Files.read** · effect: `read`", "Read a file.", "`path` (string, required): the file"}},
		{"Helper", 1, []string{"**agent Helper**", "model: `openai/gpt-4o`", "temp: `0.2`", "equips: Files", "requires: Careful"}},
		{"MaxWords", 0, []string{"**rule MaxWords**", "refuses an answer of more than n words"}},
		{"AllowEffects", 0, []string{"offers only the methods with these effects"}},
		{"Careful", 1, []string{"**policy Careful**", "`AllowEffects(read)`"}},
		{"Workspace", 0, []string{"provider **Workspace**", "`read` (read): Read a file."}},
		{"openai/gpt-4o", 0, []string{"model **gpt-4o** of provider openai", "per million input tokens"}},
		{"task", 2, []string{"parameter **task**: `String`"}},
	} {
		var h protocol.Hover
		if err := s.c.Call("textDocument/hover", docPos(uri, posOf(t, program, tt.needle, tt.nth, 1)), &h); err != nil {
			t.Fatal(err)
		}
		mc, _ := h.Contents.(protocol.MarkupContent)
		for _, w := range tt.want {
			if !strings.Contains(mc.Value, w) {
				t.Errorf("hover on %s: %q lacks %q", tt.needle, mc.Value, w)
			}
		}
	}
	var none json.RawMessage
	if err := s.c.Call("textDocument/hover", docPos(uri, protocol.Position{Line: 1, Character: 0}), &none); err != nil || string(none) != "null" {
		t.Errorf("hover on an empty line: %s %v", none, err)
	}
}

func labels(l protocol.CompletionList) []string {
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Label)
	}
	return out
}

func TestCompletion(t *testing.T) {
	s := start(t, Config{})
	uri := PathURI(filepath.Join(t.TempDir(), "a.halo"))
	for _, tt := range []struct {
		text string
		want []string
		not  []string
	}{
		{program + "    |> Files.", []string{"read", "write"}, []string{"Files"}},
		{program + "    |> System.", []string{"Value", "Fail"}, nil},
		{"policy P : Block(PII) & Max", []string{"MaxWords", "DenyArgs", "AllowTools"}, nil},
		{"policy P : AllowEffects(read, ", []string{"read", "write", "external"}, []string{"Block"}},
		{"tool T : ", []string{"Workspace", "MCP"}, nil},
		{"agent A [open", []string{"openai/gpt-4o", "anthropic/claude-sonnet-4-5"}, nil},
		{program + "agent B [openai/gpt-4o]\n  equips ", []string{"Files"}, []string{"Careful"}},
		{program + "agent B [openai/gpt-4o]\n  requires ", []string{"Careful"}, []string{"Files"}},
		{program + "    |> ", []string{"Helper", "Files", "System"}, nil}, // Tidy does not parse while its stage is written
	} {
		s.c.Change(uri, 1, tt.text)
		s.c.Open(uri, 1, tt.text)
		lines := strings.Split(tt.text, "\n")
		p := protocol.Position{Line: protocol.UInteger(len(lines) - 1), Character: protocol.UInteger(len(lines[len(lines)-1]))}
		var l protocol.CompletionList
		if err := s.c.Call("textDocument/completion", docPos(uri, p), &l); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(labels(l), " ")
		for _, w := range tt.want {
			if !strings.Contains(" "+got+" ", " "+w+" ") {
				t.Errorf("completion at the end of %q: %s lacks %s", lines[len(lines)-1], got, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(" "+got+" ", " "+n+" ") {
				t.Errorf("completion at the end of %q: %s has %s", lines[len(lines)-1], got, n)
			}
		}
	}
}

func TestDefinitionAndReferences(t *testing.T) {
	s := start(t, Config{})
	uri := PathURI(filepath.Join(t.TempDir(), "a.halo"))
	s.c.Open(uri, 1, program)
	var loc protocol.Location
	if err := s.c.Call("textDocument/definition", docPos(uri, posOf(t, program, "Files", 3, 2)), &loc); err != nil {
		t.Fatal(err)
	}
	if loc.Range.Start != posOf(t, program, "Files", 0, 0) {
		t.Errorf("definition of Files: %+v", loc)
	}
	// A parameter's use goes to the parameter.
	if err := s.c.Call("textDocument/definition", docPos(uri, posOf(t, program, "text", 1, 0)), &loc); err != nil {
		t.Fatal(err)
	}
	if loc.Range.Start != posOf(t, program, "text", 0, 0) {
		t.Errorf("definition of text: %+v", loc)
	}
	var refs []protocol.Location
	params := docPos(uri, posOf(t, program, "Files", 0, 0))
	params["context"] = map[string]any{"includeDeclaration": true}
	if err := s.c.Call("textDocument/references", params, &refs); err != nil {
		t.Fatal(err)
	}
	if len(refs) != 4 {
		t.Errorf("references of Files: %d, want 4 (the declaration, equips, the call, tools:): %+v", len(refs), refs)
	}
	params = docPos(uri, posOf(t, program, "Careful", 1, 0))
	params["context"] = map[string]any{"includeDeclaration": false}
	if err := s.c.Call("textDocument/references", params, &refs); err != nil || len(refs) != 1 {
		t.Errorf("references of Careful: %+v %v", refs, err)
	}
}

func TestSymbolsFormattingAndCodeActions(t *testing.T) {
	s := start(t, Config{})
	uri := PathURI(filepath.Join(t.TempDir(), "a.halo"))
	s.c.Open(uri, 1, program)
	var syms []protocol.DocumentSymbol
	if err := s.c.Call("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": uri}}, &syms); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sym := range syms {
		names = append(names, fmt.Sprintf("%s:%d-%d", sym.Name, sym.Range.Start.Line, sym.Range.End.Line))
	}
	if got := strings.Join(names, " "); got != "Careful:0-0 Files:2-2 Helper:4-7 Tidy:9-12" {
		t.Errorf("symbols: %s", got)
	}

	messy := "tool   Files:Workspace(root: \".\")\n"
	s.c.Change(uri, 2, messy)
	var edits []protocol.TextEdit
	if err := s.c.Call("textDocument/formatting", map[string]any{"textDocument": map[string]any{"uri": uri}, "options": map[string]any{"tabSize": 2, "insertSpaces": true}}, &edits); err != nil {
		t.Fatal(err)
	}
	if len(edits) != 1 || edits[0].NewText != "tool Files : Workspace(root: \".\")\n" || edits[0].Range.End != (protocol.Position{Line: 1, Character: 0}) {
		t.Errorf("formatting: %+v", edits)
	}
	s.c.Change(uri, 3, "tool A : (\n")
	if err := s.c.Call("textDocument/formatting", map[string]any{"textDocument": map[string]any{"uri": uri}, "options": map[string]any{}}, &edits); err == nil || !strings.Contains(err.Error(), "not formatted") {
		t.Errorf("formatting a file that does not parse: %v", err)
	}

	bad := strings.Replace(program, "equips Files", "equips Flies", 1)
	s.c.Change(uri, 4, bad)
	var actions []protocol.CodeAction
	at := posOf(t, bad, "Flies", 0, 2)
	if err := s.c.Call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri}, "range": protocol.Range{Start: at, End: at}, "context": map[string]any{"diagnostics": []any{}}}, &actions); err != nil {
		t.Fatal(err)
	}
	if len(actions) != 1 || actions[0].Title != "Replace with Files" {
		t.Fatalf("code actions: %+v", actions)
	}
	edit := actions[0].Edit.Changes[uri]
	if len(edit) != 1 || edit[0].NewText != "Files" || edit[0].Range.Start != posOf(t, bad, "Flies", 0, 0) || edit[0].Range.End != posOf(t, bad, "Flies", 0, 5) {
		t.Errorf("edit: %+v", edit)
	}
}

// A malformed message never ends the session: a body that is not JSON, a header without a
// length, a request that does not decode (answered with an error, by its id), a message
// over the limit; the server still answers after them all.
func TestMalformedMessages(t *testing.T) {
	s := start(t, Config{})
	var mu sync.Mutex
	raw := func(b string) {
		mu.Lock()
		defer mu.Unlock()
		if _, err := io.WriteString(s.in, b); err != nil {
			t.Fatal(err)
		}
	}
	frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	raw(frame(`{not json`))
	raw("X-Nothing: 1\r\n\r\n")
	raw("Content-Length: lots\r\n\r\n")
	raw(frame(`{"jsonrpc":"2.0","id":77,"method":"textDocument/hover","result":1}`))
	raw(frame(`[1,2,3]`))
	raw(frame(`{"jsonrpc":"2.0","id":{"x":1},"method":"x"}`))
	raw(frame(`{"jsonrpc":"2.0","id":78,"method":"textDocument/hover","params":"not an object"}`))
	raw("\n\n" + frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":5}}`))
	uri := PathURI(filepath.Join(t.TempDir(), "a.halo"))
	if err := s.c.Open(uri, 1, "\x00\xff garbage {{{ [[[ \"unterminated\n"+strings.Repeat("(", 500)); err != nil {
		t.Fatal(err)
	}
	if diags, err := s.c.Diagnostics(uri, 1, 10*time.Second); err != nil || len(diags) == 0 {
		t.Fatalf("a file that does not parse: %+v %v", diags, err)
	}
	s.c.Change(uri, 2, program)
	var h protocol.Hover
	if err := s.c.Call("textDocument/hover", docPos(uri, posOf(t, program, "Helper", 1, 0)), &h); err != nil || h.Contents == nil {
		t.Fatalf("after malformed messages: %+v %v", h, err)
	}
}

// The guard answers a request that does not decode with an error carrying its id, and a big
// message is read past without being held.
func TestGuard(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":5,"method":"m","result":1}`
	big := fmt.Sprintf("Content-Length: %d\r\n\r\n", MaxMessageBytes+1) + strings.Repeat(" ", MaxMessageBytes+1)
	in := fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) + big
	g := newGuard(strings.NewReader(in), io.Discard)
	for _, want := range []string{`"id":5,"jsonrpc":"2.0","method":"$/halo/invalidRequest"`, `"method":"$/halo/invalidMessage"`} {
		b, err := g.next()
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("got %s %v, want %s", b, err, want)
		}
	}
	if _, err := g.next(); err != io.EOF {
		t.Errorf("at the end: %v", err)
	}
}
