package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"halolang.dev/halo/host/runtime"
)

// The tools one agent call offers are opened together, resolving the project folder once
// between them; a warm runtime (halo serve's) must resolve it again on its next run. Here
// the project is reached through a link (current -> a); between two runs it is swapped to b,
// whose src leads outside the project and whose work leads into its .halo: the second run
// refuses both, as a runtime that just started would, and a third, back on a, runs again.
func TestOfferResolvesTheProjectEachRun(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{"a/src", "a/work", "b/.halo/runs", "outside"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"b/src": "../outside", "b/work": ".halo/runs", "current": "a"} {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	current := filepath.Join(home, "current")
	reg, env := offering(t, home)
	rt := load(t, `
agent Quick [openai/gpt-4o-mini]
  equips W, B

tool W : Workspace("src", write: true)
tool B : Bash(cwd: "work")

pipeline Offer(task: String) -> String:
  task |> Quick.fix("Fix it: {{task}}", tools: [W, B])

pipeline OfferBashFirst(task: String) -> String:
  task |> Quick.fix("Fix it: {{task}}", tools: [B, W])
`, runtime.Config{Tools: reg, Env: env, Dir: current})
	swap := func(to string) {
		t.Helper()
		if err := os.Remove(current); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(to, current); err != nil {
			t.Fatal(err)
		}
	}
	in := map[string]any{"task": "x"}
	if res := run(t, rt, "Offer", in); res.Status != runtime.Completed {
		t.Fatalf("current -> a: %+v", res.Error)
	}
	swap("b")
	for _, c := range []struct{ pipeline, want string }{
		{"Offer", "tool W: Workspace root src resolves to"},
		{"OfferBashFirst", "tool B: Bash cwd work is in the project's .halo folder"},
	} {
		res, err := rt.Run(context.Background(), c.pipeline, in)
		msg := fmt.Sprint(err)
		if err == nil && res.Error != nil {
			msg = res.Error.Code + ": " + res.Error.Message
		}
		if !strings.Contains(msg, "TOOL_CONFIG") || !strings.Contains(msg, c.want) {
			t.Errorf("%s, current -> b: %s, want TOOL_CONFIG: %s", c.pipeline, msg, c.want)
		}
	}
	swap("a")
	if res := run(t, rt, "Offer", in); res.Status != runtime.Completed {
		t.Fatalf("current -> a again: %+v", res.Error)
	}
}
