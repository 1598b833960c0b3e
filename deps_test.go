package halo_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"halolang.dev/halo/sdk"
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
	{"internal/...", nil}, // helpers shared by tests, and linediff (see hostWide): the standard library only
	{"errcode", nil},      // the coded-error type and Code: see hostWide
	{"docs", nil},         // the documentation the binary carries (halo explain): the standard library only
	{"sdk/...", []string{"proto/...", "sdk/..."}},
	{"plugins/...", []string{"sdk/...", "plugins/..."}},
	{"pkgmgr/...", []string{"pkgmgr/..."}},
	{"host/lang/...", []string{"host/lang/..."}},
	{"host/tool", nil},
	{"host/model/...", []string{"host/model/..."}},
	{"host/policy/...", []string{"host/policy/...", "host/tool"}},
	{"host/check/...", []string{"host/check/...", "host/lang/...", "host/tool", "host/policy/..."}},
	{"host/tool/...", []string{"host/tool/...", "proto/...", "sdk/...", "plugins/...", "pkgmgr/..."}}, // host/tool/builtin serves and describes plugins/workspace and plugins/bash
	{"host/store/...", []string{"host/store/...", "host/tool", "host/model/..."}},                     // stores know the tool contract and embed through host/model, nothing of pipelines
	{"host/agent/...", []string{"host/agent/...", "host/tool", "host/model/...", "host/policy/..."}},  // the loop knows models, policies and the tool contract, not pipelines
	{"host/runtime/...", []string{"host/runtime/...", "host/agent/...", "host/store/...", "host/tool/...", "host/model/...", "host/policy/...", "host/check/...", "host/lang/...", "pkgmgr/...", "sdk/...", "proto/..."}},
	{"host/plan/...", []string{"host/plan/...", "host/agent/...", "host/store/...", "host/tool/...", "host/model/...", "host/policy/...", "host/check/...", "host/lang/..."}}, // halo plan reads what the runtime reads (agents, tool descriptions, policies, prices) and never runs anything, so it stands beside host/runtime without importing it
	{"host/mcpserver/...", []string{"host/mcpserver/...", "host/runtime/...", "host/agent/...", "host/tool/...", "host/model/...", "host/policy/...", "host/check/...", "host/lang/...", "pkgmgr/...", "sdk/...", "proto/..."}},
	{"host/runstore/...", []string{"host/runstore/...", "host/runtime/...", "host/agent/...", "host/tool/...", "host/model/...", "host/policy/...", "host/check/...", "host/lang/...", "pkgmgr/...", "sdk/...", "proto/..."}},
	{"host/serve/...", []string{"host/serve/...", "host/runstore/...", "host/mcpserver/...", "host/telemetry/...", "host/runtime/...", "host/agent/...", "host/tool/...", "host/model/...", "host/policy/...", "host/check/...", "host/lang/...", "pkgmgr/...", "sdk/...", "proto/..."}},
	{"host/debug/...", []string{"host/debug/...", "host/runtime/...", "host/agent/...", "host/tool/...", "host/model/...", "host/policy/...", "host/check/...", "host/lang/...", "pkgmgr/...", "sdk/...", "proto/..."}}, // the debugger sits beside host/serve: it drives the runtime through its hooks
	{"host/studio/...", []string{"host/studio/..."}}, // pages over the API only; serve mounts it without importing it (serve.Config.Pages)
	{"host/lsp/...", []string{"host/lsp/...", "host/runtime/...", "host/agent/...", "host/tool/...", "host/model/...", "host/policy/...", "host/check/...", "host/lang/...", "pkgmgr/...", "sdk/...", "proto/..."}}, // the language server checks as halo validate does (runtime.Validate), beside serve and studio
	{"host/telemetry/...", []string{"host/telemetry/...", "host/runtime/...", "host/agent/...", "host/tool/...", "host/model/...", "host/policy/...", "host/check/...", "host/lang/...", "pkgmgr/...", "sdk/...", "proto/..."}},
	{"registry/...", []string{"registry/...", "pkgmgr/..."}},
	{"cmd/halo/...", []string{"..."}},
	{"scripts/...", []string{"pkgmgr/..."}}, // scripts/release: the release's module proxy tree and signatures
	{".", nil},
}

const module = "halolang.dev/halo"

// hostWide reports whether every package of the host may import imp, beside its rule: errcode,
// the coded-error type and Code, internal/linediff, the line diff shown to people, and
// internal/jsonappend, JSON written without reflection, internal/safefile, files a
// repository controls read without waiting on a planted pipe, and internal/sqlitedb, how the
// run store and the stores open SQLite (leaves that import nothing of the module). A plugin author's code (sdk, plugins, proto) never does.
func hostWide(pkg, imp string) bool {
	return (imp == "errcode" || imp == "internal/linediff" || imp == "internal/jsonappend" || imp == "internal/safefile" || imp == "internal/sqlitedb") && !match("sdk/...", pkg) && !match("plugins/...", pkg) && !match("proto/...", pkg)
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

// modules are the repository's Go modules: the host, and the SDK and the plugin contract, which
// plugin authors require on their own. `go list ./...` stops at a nested go.mod, so each is
// listed from its own folder.
var modules = []string{".", "sdk", "proto"}

func TestDependencyDirection(t *testing.T) {
	var out []byte
	for _, dir := range modules {
		cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
		cmd.Dir = dir
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list in %s: %v", dir, err)
		}
		out = append(out, b...)
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
	var out []byte
	for _, c := range []struct{ dir, pattern string }{{"sdk", "./..."}, {".", "./plugins/..."}} {
		cmd := exec.Command("go", "list", "-deps", c.pattern)
		cmd.Dir = c.dir
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s in %s: %v\n%s", c.pattern, c.dir, err, b)
		}
		out = append(out, b...)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, module+"/host/") || strings.HasPrefix(dep, module+"/pkgmgr") || strings.HasPrefix(dep, module+"/cmd/") {
			t.Errorf("sdk or plugins depend on %s", dep)
		}
	}
}

// TestModuleRequirements checks what a plugin author downloads with the SDK: the sdk module
// requires the plugin contract and the libraries it uses, never the host module; the proto
// module requires gRPC and protobuf only. Every module that provides a package either of them
// builds or tests with is at the version the host module selects, so one `go mod download` at
// the root fetches everything all three modules build with (CI builds them from that cache).
func TestModuleRequirements(t *testing.T) {
	direct := map[string][]string{
		// protobuf: the calls socket frames its messages itself (gRPC and the contract need
		// it anyway, so it downloads nothing more).
		"sdk":   {module + "/proto", "github.com/hashicorp/go-hclog", "github.com/hashicorp/go-plugin", "github.com/invopop/jsonschema", "google.golang.org/grpc", "google.golang.org/protobuf"},
		"proto": {"google.golang.org/grpc", "google.golang.org/protobuf"},
	}
	// testOnly are required only by a module's tests: the v2 JSON API, the peer that
	// BenchmarkFastJSONV2 holds the SDK's hand-written codec to. No package a plugin builds
	// with imports one (checked below), so a plugin's build never compiles it.
	testOnly := map[string][]string{
		"sdk": {"github.com/go-json-experiment/json"},
	}
	list := func(dir string, tests bool) map[string]string {
		cmd := exec.Command("go", "list", "-deps", "-test="+strconv.FormatBool(tests), "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}", "./...")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps (tests %v) in %s: %v", tests, dir, err)
		}
		m := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if path, version, ok := strings.Cut(line, " "); ok {
				m[path] = version
			}
		}
		return m
	}
	selected := func(dir string) map[string]string { return list(dir, true) }
	host := selected(".")
	for dir, allowed := range direct {
		out, err := exec.Command("go", "mod", "edit", "-json", dir+"/go.mod").Output()
		if err != nil {
			t.Fatalf("go mod edit -json %s/go.mod: %v", dir, err)
		}
		var gomod struct {
			Module  struct{ Path string }
			Require []struct {
				Path     string
				Indirect bool
			}
		}
		if err := json.Unmarshal(out, &gomod); err != nil {
			t.Fatal(err)
		}
		if want := module + "/" + dir; gomod.Module.Path != want {
			t.Errorf("%s/go.mod is module %s, want %s", dir, gomod.Module.Path, want)
		}
		for _, r := range gomod.Require {
			if r.Path == module {
				t.Errorf("%s/go.mod requires the host module %s: a plugin author would download all of Halo", dir, module)
			}
			if !r.Indirect && !slices.Contains(allowed, r.Path) && !slices.Contains(testOnly[dir], r.Path) {
				t.Errorf("%s/go.mod requires %s directly: not one of the SDK's chosen dependencies (%s)", dir, r.Path, strings.Join(allowed, ", "))
			}
		}
		built := list(dir, false)
		for _, path := range testOnly[dir] {
			if _, ok := built[path]; ok {
				t.Errorf("a package of %s builds with %s, which it may require for its tests only", dir, path)
			}
		}
		for path, version := range selected(dir) {
			if hv, ok := host[path]; ok && hv != version && !strings.HasPrefix(path, module) {
				t.Errorf("%s selects %s %s, the host module %s: align them (go get %s@%s in %s)", dir, path, version, hv, path, hv, dir)
			}
		}
	}
}

// TestSDKVersion keeps the versions in step: the host requires the SDK at sdk.Version (what
// `halo plugin init` writes into a new plugin's go.mod), and the SDK and the host require the
// same version of the plugin contract.
func TestSDKVersion(t *testing.T) {
	requires := func(gomod string) map[string]string {
		out, err := exec.Command("go", "mod", "edit", "-json", gomod).Output()
		if err != nil {
			t.Fatalf("go mod edit -json %s: %v", gomod, err)
		}
		var m struct {
			Require []struct{ Path, Version string }
		}
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatal(err)
		}
		r := map[string]string{}
		for _, x := range m.Require {
			r[x.Path] = x.Version
		}
		return r
	}
	host, sdkMod := requires("go.mod"), requires("sdk/go.mod")
	if got, want := host[module+"/sdk"], "v"+sdk.Version; got != want {
		t.Errorf("go.mod requires %s/sdk %s, but sdk.Version is %s", module, got, want)
	}
	if host[module+"/proto"] == "" || host[module+"/proto"] != sdkMod[module+"/proto"] {
		t.Errorf("go.mod requires %s/proto %q, sdk/go.mod %q: they must be the same", module, host[module+"/proto"], sdkMod[module+"/proto"])
	}
}
