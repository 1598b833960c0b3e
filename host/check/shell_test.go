package check

import (
	"strings"
	"testing"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/builtin"
	"halolang.dev/halo/host/tool/mcp"
	"halolang.dev/halo/host/tool/sandbox"
)

// builtinConfig is testConfig with the built-in types exactly as halo validate describes
// them (their methods' parameters, effects and Bash's shell command line).
func builtinConfig() Config { return builtinConfigWith() }

// builtinConfigWith is builtinConfig with the types extra too.
func builtinConfigWith(extra ...tool.Type) Config {
	reg := tool.NewRegistry()
	types := append(builtin.New(builtin.Config{Status: &sandbox.Status{}}).Types(), mcp.Type(nil))
	for _, t := range append(types, extra...) {
		if err := reg.Add(t); err != nil {
			panic(err)
		}
	}
	cfg := testConfigWith(extra, lockProviders)
	cfg.ToolMethods = func(p string) ([]tool.Method, bool) {
		t, ok := reg.Lookup(p)
		return t.Methods, ok && t.Methods != nil
	}
	return cfg
}

// diagsWith checks src and returns the diagnostics with code.
func diagsWith(t *testing.T, src, code string) lang.Diagnostics {
	t.Helper()
	f, diags := lang.Parse("t.halo", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("parse: %v", diags)
	}
	var out lang.Diagnostics
	for _, d := range Check(&lang.Program{Files: []*lang.File{f}}, builtinConfig()) {
		if d.Code == code {
			out = append(out, d)
		}
	}
	return out
}

// Issue 27 item 11: a template in a Bash command is quoted as one word where it stands;
// halo validate refuses one that stands where no quoting is safe, and warns of {{raw x}}.
func TestShellTemplates(t *testing.T) {
	const head = "tool Sh : Bash()\npipeline P(s: String) -> Result:\n  s |> "
	tests := []struct {
		call string
		want []string // severity: message part, one per diagnostic
	}{
		{`Sh.run(command: "echo {{s}}")`, nil},
		{`Sh.run("echo '{{s}}' \"{{s}}\"")`, nil},
		{`Sh.run({command: "echo {{s}}"})`, nil},
		{`Sh.run(command: "echo {{raw s}}")`, []string{"warning: {{raw s}} puts s into the shell command as written"}},
		{`Sh.run("echo {{raw s}}")`, []string{"warning: {{raw s}}"}},
		{`Sh.run({command: "echo {{raw s}}"})`, []string{"warning: {{raw s}}"}},
		{`Sh.run(command: "echo $(date) {{s}}")`, []string{"error: {{s}} stands after $("}},
		{`Sh.run(command: "cat <<EOF\n{{s}}\nEOF")`, []string{"error: {{s}} stands after << (a here-document)"}},
		{`Sh.run(command: "echo hi # {{s}}")`, []string{"error: {{s}} stands in a comment"}},
		{`Sh.run(command: "echo \\{{s}}")`, []string{"error: {{s}} stands right after a backslash"}},
		{`Sh.run(command: s)`, nil},
	}
	for _, tt := range tests {
		ds := diagsWith(t, head+tt.call+"\n", CodeShellTemplate)
		if len(ds) != len(tt.want) {
			t.Errorf("%s: %v, want %d diagnostics", tt.call, ds, len(tt.want))
			continue
		}
		for i, d := range ds {
			if got := string(d.Severity) + ": " + d.Message; !strings.HasPrefix(got, tt.want[i]) {
				t.Errorf("%s: %q, want %q", tt.call, got, tt.want[i])
			}
		}
	}
}
