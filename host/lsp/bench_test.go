package lsp

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runtime"
)

// bigFile is a program of about lines lines: policies, tools, agents and pipelines, each
// with its own names, and one error at the end.
func bigFile(lines int) string {
	var b strings.Builder
	for i := 0; strings.Count(b.String(), "\n") < lines; i++ {
		fmt.Fprintf(&b, `# Block %[1]d.
policy Careful%[1]d : AllowEffects(read) & MaxWords(%[2]d)
  & DenyArgs("Files%[1]d.read", "path", "\\.env$")

tool Files%[1]d : Workspace(root: ".")

agent Helper%[1]d [openai/gpt-4o, temp: 0.2, max_steps: 10]
  system "You help with {{task}}."
  equips Files%[1]d
  requires Careful%[1]d

pipeline Tidy%[1]d(task: String) -> Result:
  task
    |> Files%[1]d.read(path: task) as text
    |> Helper%[1]d.work(text, tools: [Files%[1]d]) as answer
    |> branch {
      "answer != ''": System.Value(answer)
      else: System.Fail("no answer")
    }

`, i, 50+i)
	}
	b.WriteString("agent Last [openai/gpt-4o]\n  equips Flies\n")
	return b.String()
}

// BenchmarkDiagnosticsAfterEdit is the time from an edit of a 2,000-line file to its
// diagnostics arriving at the client (the debounce set to nothing): the goal is 20 ms. The
// floors beside it are the same file's parse alone, and its parse and check without the
// server.
func BenchmarkDiagnosticsAfterEdit(b *testing.B) {
	text := bigFile(2000)
	if n := strings.Count(text, "\n"); n < 2000 {
		b.Fatalf("%d lines", n)
	}
	reg, _ := testProject("")
	b.Run("floor-parse", func(b *testing.B) {
		for b.Loop() {
			lang.Parse("a.halo", []byte(text))
		}
	})
	b.Run("floor-parse-check", func(b *testing.B) {
		for b.Loop() {
			f, diags := lang.Parse("a.halo", []byte(text))
			diags = append(diags, runtime.Validate(&lang.Program{Files: []*lang.File{f}}, reg)...)
			diags.Locate(func(string) ([]byte, bool) { return []byte(text), true })
		}
	})
	b.Run("lsp", func(b *testing.B) {
		s := start(&testing.T{}, Config{Debounce: time.Nanosecond})
		defer s.stop()
		uri := PathURI(filepath.Join(b.TempDir(), "a.halo"))
		if err := s.c.Open(uri, 1, text); err != nil {
			b.Fatal(err)
		}
		if _, err := s.c.Diagnostics(uri, 1, time.Minute); err != nil {
			b.Fatal(err)
		}
		// The edit: a character typed on the last line, at the end of the undeclared name,
		// sent as editors send it (the changed range only).
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		at := protocol.Position{Line: protocol.UInteger(len(lines) - 1), Character: protocol.UInteger(len(lines[len(lines)-1]))}
		v := 1
		for b.Loop() {
			v++
			if err := s.c.Edit(uri, v, at, at, "s"); err != nil {
				b.Fatal(err)
			}
			at.Character++
			diags, err := s.c.Diagnostics(uri, v, time.Minute)
			if err != nil || len(diags) != 1 {
				b.Fatalf("%v %v", diags, err)
			}
		}
	})
}
