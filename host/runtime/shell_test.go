package runtime_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

// bashRun is a Bash-like provider: its one method, run, is described as Bash's is (command
// is its shell command line) and runs the command with bash -c in dir, as the plugin does.
type bashRun struct{ dir string }

var bashMethods = []tool.Method{{Name: "run", Effect: tool.External, Shell: "command",
	Params: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}}

func (b bashRun) Methods(context.Context) ([]tool.Method, error) { return bashMethods, nil }
func (b bashRun) Close() error                                   { return nil }
func (b bashRun) Call(_ context.Context, req tool.Request) (json.RawMessage, error) {
	var p struct{ Command string }
	if err := json.Unmarshal(req.Args, &p); err != nil {
		return nil, err
	}
	cmd := exec.Command("bash", "-c", p.Command)
	cmd.Dir = b.dir
	out, _ := cmd.CombinedOutput()
	return json.Marshal(map[string]any{"command": p.Command, "stdout": string(out)})
}

// Issue 27 item 11, as the attack was written: a run's input (or an agent's answer flowing
// through `as report`) filled into a Bash command ran as shell. Each value now goes in as one
// shell word, whichever way the command is written; {{raw s}} is the explicit way to put it
// in as written.
func TestTemplatesInBashCommandsAreQuoted(t *testing.T) {
	dir := t.TempDir()
	reg := tool.NewRegistry()
	if err := reg.Add(tool.Type{Name: "Bash", Kind: tool.KindBuiltin, Methods: bashMethods,
		Open: func(context.Context, tool.Declaration) (tool.Provider, error) { return bashRun{dir}, nil }}); err != nil {
		t.Fatal(err)
	}
	src := `
tool Sh : Bash()
pipeline Named(s: String) -> Result:
  s |> Sh.run(command: "echo {{s}}")
pipeline Positional(s: String) -> Result:
  s |> Sh.run("printf '%s|' \"{{s}}\" '{{s}}'")
pipeline Flowing(s: String) -> Result:
  s |> System.Value("echo {{s}}") as line |> Sh.run(command: "echo {{line}}")
pipeline Raw(s: String) -> Result:
  s |> Sh.run(command: "echo {{raw s}}")
`
	rt := load(t, src, runtime.Config{Tools: reg, Dir: dir})
	const attack = `hi; touch INJECTED; echo "$(touch INJECTED)" '` + "`touch INJECTED`"
	for _, tt := range []struct{ pipeline, stdout string }{
		{"Named", attack + "\n"},
		{"Positional", attack + "|" + attack + "|"},
		{"Flowing", "echo " + attack + "\n"},
	} {
		res := run(t, rt, tt.pipeline, map[string]any{"s": attack})
		wantCompleted(t, res)
		out, _ := res.Output.(map[string]any)
		if _, err := os.Stat(filepath.Join(dir, "INJECTED")); err == nil {
			t.Fatalf("%s ran the value as shell: bash -c %q", tt.pipeline, out["command"])
		}
		if out["stdout"] != tt.stdout {
			t.Errorf("%s: bash -c %q printed %q, want %q", tt.pipeline, out["command"], out["stdout"], tt.stdout)
		}
	}
	res := run(t, rt, "Raw", map[string]any{"s": "hi; touch INJECTED"})
	wantCompleted(t, res)
	if _, err := os.Stat(filepath.Join(dir, "INJECTED")); err != nil {
		t.Errorf("{{raw s}} is as written: the value should have run")
	}
}
