package diagtext

import (
	"bytes"
	"strings"
	"testing"

	"halolang.dev/halo/host/lang"
)

func TestWriteRich(t *testing.T) {
	src := []byte("agent A [openai/gpt-4o]\n\tequips Doc\x1b[2J\n")
	diags := lang.Diagnostics{
		{Pos: lang.Pos{File: "a.halo", Line: 2, Col: 9}, Severity: lang.Error, Code: "UNDECLARED", Message: "undeclared tool Doc", Help: "did you mean Docs?"},
		{Pos: lang.Pos{File: "halo.lock"}, Severity: lang.Warning, Code: "IO", Message: "bad\x07 lock"},
	}
	source := func(name string) ([]byte, bool) { return src, name == "a.halo" }
	var b bytes.Buffer
	Write(&b, diags, source, Style{Rich: true})
	want := `error[UNDECLARED]: undeclared tool Doc
 --> a.halo:2:9
  |
2 |     equips Doc\u001b[2J
  |            ^^^
  = help: did you mean Docs?

warning[IO]: bad\u0007 lock
 --> halo.lock

For more about a code, run halo explain CODE (UNDECLARED, IO).
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	Write(&b, diags, source, Style{Rich: true, Color: true})
	if !strings.Contains(b.String(), "\x1b[1;31merror[UNDECLARED]\x1b[0m") || !strings.Contains(b.String(), "\x1b[1;31m^^^\x1b[0m") || strings.Contains(b.String(), "\x1b[2J") {
		t.Errorf("colour:\n%q", b.String())
	}

	b.Reset()
	Write(&b, diags, source, Style{})
	if b.String() != "a.halo:2:9: error: undeclared tool Doc; did you mean Docs? [UNDECLARED]\nhalo.lock: warning: bad\\u0007 lock [IO]\n" {
		t.Errorf("plain:\n%s", b.String())
	}
}
