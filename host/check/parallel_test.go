package check

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/policy"
)

func hasCode(diags lang.Diagnostics, code string) bool {
	for _, d := range diags {
		if d.Code == code {
			return true
		}
	}
	return false
}

// TestCheckParallel: a program checked in parts on several goroutines gets the diagnostics,
// in the same order, that one checker gives: the 1 MB benchmark program, the same with
// every bad test program and the examples mixed in (duplicates across parts, agents that
// require policies another part declares, suggestions), and each bad program and example on
// its own.
func TestCheckParallel(t *testing.T) {
	cfg := builtinConfig()
	var srcs [][]byte
	for _, glob := range []string{"testdata/bad/*.halo", "../../examples/*.halo", "../lang/testdata/*/*.halo"} {
		files, _ := filepath.Glob(glob)
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			srcs = append(srcs, b)
		}
	}
	if len(srcs) < 10 {
		t.Fatalf("%d test programs found", len(srcs))
	}
	big := genProgram(1 << 20)
	mixed := append([]byte(nil), big[:len(big)/3]...)
	for i, b := range srcs {
		mixed = append(mixed, '\n')
		mixed = append(mixed, b...)
		mixed = append(mixed, '\n')
		// Every program declares its names again further on: duplicates in another part.
		third := len(big) * (i%3 + 1) / 3
		mixed = append(mixed, big[third-len(big)/(3*len(srcs)):third]...)
	}
	progs := append([][]byte{big, mixed}, srcs...)
	for i, src := range progs {
		f, _ := lang.Parse("p.halo", src)
		decls := (&lang.Program{Files: []*lang.File{f}}).Decls()
		want := checkInParts(decls, cfg, 1)
		if i == 1 && len(want) < 50 {
			t.Fatalf("the mixed program has %d diagnostics: too few to compare", len(want))
		}
		if i == 1 && !hasCode(want, policy.CodeHole) {
			t.Fatalf("the mixed program has no %s warning: the policy sets checked in runs find nothing to compare", policy.CodeHole)
		}
		for _, parts := range []int{2, 3, 7} {
			got := checkInParts(decls, cfg, parts)
			if !reflect.DeepEqual(got, want) {
				k := 0
				for k < len(got) && k < len(want) && reflect.DeepEqual(got[k], want[k]) {
					k++
				}
				var g, w bytes.Buffer
				for _, d := range got[k:min(k+5, len(got))] {
					g.WriteString(d.String() + "\n")
				}
				for _, d := range want[k:min(k+5, len(want))] {
					w.WriteString(d.String() + "\n")
				}
				t.Logf("first difference at %d of %d/%d: %#v / %#v", k, len(got), len(want), got[min(k, len(got)-1)], want[min(k, len(want)-1)])
				t.Fatalf("program %d in %d parts:\n got %.3000s\nwant %.3000s", i, parts, g.String(), w.String())
			}
		}
	}
}

// TestCheckPartsAtOnce: the parts of a program are checked at the same time, not one after
// the other. Each of two parts declares a tool whose declaration check waits until the
// other part's has begun: checked in turn, the first part would wait for ever (here, until
// the test gives up on it).
func TestCheckPartsAtOnce(t *testing.T) {
	f, diags := lang.Parse("p.halo", []byte("tool A : Bash(cwd: \"a\")\ntool B : Bash(cwd: \"b\")\n"))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	decls := (&lang.Program{Files: []*lang.File{f}}).Decls()
	begun := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	other := map[string]string{"a": "b", "b": "a"}
	cfg := builtinConfig()
	cfg.ChecksDeclaration = nil
	cfg.CheckDeclaration = func(_ string, _ []any, named map[string]any) []DeclProblem {
		cwd, _ := named["cwd"].(string)
		close(begun[cwd])
		select {
		case <-begun[other[cwd]]:
			return nil
		case <-time.After(10 * time.Second):
			return []DeclProblem{{Option: "cwd", Message: "the other part was not being checked"}}
		}
	}
	if got := checkInParts(decls, cfg, 2); len(got) > 0 {
		t.Fatalf("checked in 2 parts: %v", got)
	}
}
