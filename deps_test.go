package halo_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// The dependency direction of ../shared/DESIGN.md, written as rules (in the manner of Go's
// go/build/deps_test.go): each package pattern lists the module packages it may import.
// A pattern ending in "/..." covers the folder and everything below it. A package that no
// rule covers fails the test, so a new folder needs a rule before it lands.
var importRules = []struct {
	pkg     string
	allowed []string
}{
	{"proto/...", nil},
	{"internal/...", nil}, // helpers shared by tests: the standard library only
	{"errcode", nil},      // the coded-error type and Code: see hostWide
	{"sdk/...", []string{"proto/...", "sdk/..."}},
	{"plugins/...", []string{"sdk/...", "plugins/..."}},
	{"pkgmgr/...", []string{"pkgmgr/..."}},
	{"host/lang/...", []string{"host/lang/..."}},
	{"host/tool", nil},
	{"host/model/...", []string{"host/model/..."}},
	{"host/policy/...", []string{"host/policy/...", "host/tool"}},
	{"host/check/...", []string{"host/check/...", "host/lang/...", "host/tool", "host/policy/..."}},
	{"host/tool/...", []string{"host/tool/...", "proto/...", "sdk/...", "plugins/...", "pkgmgr/..."}}, // host/tool/builtin serves and describes plugins/workspace and plugins/bash
	{"host/agent/...", []string{"host/agent/...", "host/tool", "host/model/...", "host/policy/..."}},  // the loop knows models, policies and the tool contract, not pipelines
	{"host/runtime/...", []string{"host/runtime/...", "host/agent/...", "host/tool/...", "host/model/...", "host/policy/...", "host/check/...", "host/lang/...", "pkgmgr/...", "sdk/...", "proto/..."}},
	{"host/mcpserver/...", []string{"host/mcpserver/...", "host/runtime/...", "host/agent/...", "host/tool/...", "host/model/...", "host/policy/...", "host/check/...", "host/lang/...", "pkgmgr/...", "sdk/...", "proto/..."}},
	{"host/runstore/...", []string{"host/runstore/...", "host/runtime/...", "host/agent/...", "host/tool/...", "host/model/...", "host/policy/...", "host/check/...", "host/lang/...", "pkgmgr/...", "sdk/...", "proto/..."}},
	{"host/serve/...", []string{"host/serve/...", "host/runstore/...", "host/mcpserver/...", "host/runtime/...", "host/agent/...", "host/tool/...", "host/model/...", "host/policy/...", "host/check/...", "host/lang/...", "pkgmgr/...", "sdk/...", "proto/..."}},
	{"host/studio/...", []string{"host/studio/..."}}, // pages over the API only; serve mounts it without importing it (serve.Config.Pages)
	{"registry/...", []string{"registry/...", "pkgmgr/..."}},
	{"cmd/halo/...", []string{"..."}},
	{".", nil},
}

const module = "github.com/halo-lang/halo"

// hostWide reports whether every package of the host may import imp, beside its rule: errcode,
// the coded-error type and Code. A plugin author's code (sdk, plugins, proto) never does.
func hostWide(pkg, imp string) bool {
	return imp == "errcode" && !match("sdk/...", pkg) && !match("plugins/...", pkg) && !match("proto/...", pkg)
}

func match(pattern, rel string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == base || strings.HasPrefix(rel, base+"/")
	}
	return rel == pattern
}

func ruleFor(rel string) ([]string, bool) {
	// The most specific rule wins: "host/tool" before "host/tool/...".
	for _, r := range importRules {
		if !strings.HasSuffix(r.pkg, "/...") && r.pkg == rel {
			return r.allowed, true
		}
	}
	for _, r := range importRules {
		if match(r.pkg, rel) {
			return r.allowed, true
		}
	}
	return nil, false
}

func TestDependencyDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(string(bytes.TrimSpace(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if pkg == "" {
			pkg = "."
		}
		allowed, ok := ruleFor(pkg)
		if !ok {
			t.Errorf("package %s has no rule in importRules: add one that follows DESIGN.md", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			rel := strings.TrimPrefix(imp, module+"/")
			permitted := hostWide(pkg, rel)
			for _, a := range allowed {
				if match(a, rel) {
					permitted = true
					break
				}
			}
			if !permitted {
				t.Errorf("%s imports %s: not allowed by the dependency direction in DESIGN.md", pkg, rel)
			}
		}
	}
}

// TestSDKImportsNoHost checks the SDK's whole dependency graph, not only direct imports: a
// third-party plugin must never pull in host code.
func TestSDKImportsNoHost(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./sdk/...", "./plugins/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, module+"/host/") || strings.HasPrefix(dep, module+"/pkgmgr") || strings.HasPrefix(dep, module+"/cmd/") {
			t.Errorf("sdk or plugins depend on %s", dep)
		}
	}
}
