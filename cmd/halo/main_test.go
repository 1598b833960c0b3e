package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run this test binary as the `halo` command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"halo": func() { os.Exit(halo()) },
	})
}

// TestScripts runs every testdata/script/*.txtar: one behaviour of the CLI each.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: false,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			// The MCP reference server scripts/setup-test-deps.sh installs (mcp_everything.txtar).
			root, err := filepath.Abs("../..")
			if err != nil {
				return err
			}
			env.Setenv("EVERYTHING", filepath.Join(root, ".cache/npm/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"fakemodel":  fakeModel,
			"initbudget": initBudget,
			"ptyanswer":  ptyAnswer,
			"ptydebug":   ptyDebug,
			"ptyrun":     ptyRun,
		},
	})
}

// initBudget checks the GODEBUG=inittrace=1 report in stderr: `initbudget EACH TOTAL
// [PKG=KB...]` fails when one package's init allocates more than EACH kilobytes, or all of them
// more than TOTAL. A PKG=KB argument gives one named package a budget of its own, counted apart
// from TOTAL: an init Halo cannot change, with its reason beside it in the script. Allocation is
// a steady stand-in for the time an init takes, and every start of halo pays it: each command,
// and each built-in plugin, which is halo re-executed.
func initBudget(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: initbudget EACH_KB TOTAL_KB [PACKAGE=KB...]"
	if neg || len(args) < 2 {
		ts.Fatalf(usage)
	}
	kb, err1 := strconv.Atoi(args[0])
	totalKB, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil {
		ts.Fatalf(usage)
	}
	own := map[string]int{}
	for _, a := range args[2:] {
		pkg, v, ok := strings.Cut(a, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			ts.Fatalf(usage)
		}
		own[pkg] = n
	}
	if raceOn {
		// The race detector's runtime makes some inits allocate many times more, and by
		// varying amounts (prometheus/client_golang: 65 KB without it, 0.8 to 1.2 MB with
		// it): only a gross regression is caught here; scripts/test.sh checks the exact
		// budgets in a run without it.
		kb, totalKB = 8*kb, 8*totalKB
		for pkg := range own {
			own[pkg] *= 8
		}
		ts.Logf("race detector: budgets of %d KB each and %d KB in all", kb, totalKB)
	}
	// init github.com/x/y @12 ms, 0.5 ms clock, 1701704 bytes, 21289 allocs
	line := regexp.MustCompile(`(?m)^init (\S+) @.*, (\d+) bytes, \d+ allocs$`)
	seen, total := 0, 0
	var over []string
	for _, m := range line.FindAllStringSubmatch(ts.ReadFile("stderr"), -1) {
		n, _ := strconv.Atoi(m[2])
		seen++
		if budget, ok := own[m[1]]; ok {
			ts.Logf("%s: %d KB, its own budget %d KB", m[1], n>>10, budget)
			if n > budget<<10 {
				over = append(over, fmt.Sprintf("%s (%d KB, over its own %d KB)", m[1], n>>10, budget))
			}
			delete(own, m[1])
			continue
		}
		total += n
		if n > kb<<10 {
			over = append(over, fmt.Sprintf("%s (%d KB)", m[1], n>>10))
		}
	}
	if seen == 0 {
		ts.Fatalf("initbudget: no inittrace lines in stderr")
	}
	for pkg := range own {
		// A budget for a package halo no longer links is stale: remove it from the script.
		ts.Fatalf("initbudget: %s has a budget of its own but no init ran: remove it", pkg)
	}
	ts.Logf("%d package inits, %d KB in all", seen, total>>10)
	if len(over) > 0 {
		ts.Fatalf("package inits over the budget of %d KB each: %s", kb, strings.Join(over, ", "))
	}
	if total > totalKB<<10 {
		ts.Fatalf("package inits allocate %d KB in all, over the budget of %d KB", total>>10, totalKB)
	}
}
