package initcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/host/check"
	"halolang.dev/halo/host/lang"
)

// TestExampleValidates: the pipeline init writes has no diagnostic at all.
func TestExampleValidates(t *testing.T) {
	f, diags := lang.Parse(ExampleFile, []byte(Example))
	diags = append(diags, check.Check(&lang.Program{Files: []*lang.File{f}}, check.Config{})...)
	for _, d := range diags {
		t.Errorf("%s", d)
	}
}

// The files halo init writes are as halo fmt would write them.
func TestExampleIsFormatted(t *testing.T) {
	out, diags := lang.Format(ExampleFile, []byte(Example))
	if diags != nil || string(out) != Example {
		t.Errorf("halo fmt would change %s (%v):\n%s", ExampleFile, diags, out)
	}
}

func TestInitRefusesAndChangesNothing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.halo"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := initRun(&Options{IO: cmdutil.IOStreams{Out: &out, ErrOut: &out}, Dir: dir})
	if err == nil {
		t.Fatal("init overwrote hello.halo")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files after a refused init: %v", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "hello.halo")); string(b) != "mine" {
		t.Errorf("hello.halo changed: %q", b)
	}
}

func TestInitNameFromFolder(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := initRun(&Options{IO: cmdutil.IOStreams{Out: &out, ErrOut: &out}, Dir: dir, Folder: "My.Flows"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "My.Flows", "halo.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "{\n  \"name\": \"my.flows\"\n}\n" {
		t.Errorf("halo.json = %q", b)
	}
}

// TestExampleTestCase: the test case init writes is one JSON object naming the example's
// pipeline and its agent call (halo test runs it in lang_init.txtar).
func TestExampleTestCase(t *testing.T) {
	var c struct {
		Pipeline string
		Mocks    map[string]any
	}
	if err := json.Unmarshal([]byte(ExampleTest), &c); err != nil {
		t.Fatal(err)
	}
	if c.Pipeline != "Hello" || c.Mocks["Greeter.greet"] == nil {
		t.Errorf("case %+v", c)
	}
}

func TestNewCmdInitFlags(t *testing.T) {
	var got *Options
	f := &cmdutil.Factory{Dir: "/work"}
	cmd := NewCmdInit(f, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"proj", "--name", "demo", "--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Dir != "/work" || got.Folder != "proj" || got.Name != "demo" || !got.JSON {
		t.Errorf("got %+v", got)
	}
}
