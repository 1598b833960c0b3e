package pkgcmd

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/pkgmgr"
)

func TestRegistryLocationPrecedence(t *testing.T) {
	dir := t.TempDir()
	f := &cmdutil.Factory{Dir: dir, Env: cmdutil.Env{}}
	if loc, err := RegistryLocation(f, ""); err != nil || loc != "" {
		t.Fatalf("default: %q %v", loc, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "halo.json"), []byte(`{"registry": "https://json.example/index.json", "other": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if loc, _ := RegistryLocation(f, ""); loc != "https://json.example/index.json" {
		t.Fatalf("halo.json: %q", loc)
	}
	f.Env["HALO_REGISTRY"] = "https://env.example/index.json"
	if loc, _ := RegistryLocation(f, ""); loc != "https://env.example/index.json" {
		t.Fatalf("env: %q", loc)
	}
	if loc, _ := RegistryLocation(f, "./flag/index.json"); loc != "./flag/index.json" {
		t.Fatalf("flag: %q", loc)
	}
	if err := os.WriteFile(filepath.Join(dir, "halo.json"), []byte(`{`), 0o644); err != nil {
		t.Fatal(err)
	}
	delete(f.Env, "HALO_REGISTRY")
	if _, err := RegistryLocation(f, ""); err == nil || !strings.Contains(err.Error(), "halo.json") {
		t.Fatalf("bad halo.json: %v", err)
	}
}

func TestReserved(t *testing.T) {
	r := Reserved()
	for _, n := range []string{"Workspace", "Bash", "MCP"} {
		if !r(n) {
			t.Errorf("%s is not reserved", n)
		}
	}
	if r("Stripe") {
		t.Error("Stripe is reserved")
	}
}

func TestDeclarations(t *testing.T) {
	m, err := pkgmgr.ParseManifest([]byte(`{"name":"cf","version":"1.0.0","description":"d","providers":{
	  "Zone":{"kind":"http","description":"d","baseUrl":"https://api.example.com/{{zone}}/{{env}}","methods":[{"name":"a","description":"d","effect":"read","http":{"method":"GET","path":"/a"}}]},
	  "Acct":{"kind":"mcp","description":"d","url":"https://mcp.example.com"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := Declarations(m); got != `tool X : Acct(...), tool X : Zone(zone: "...", env: "...")` {
		t.Fatalf("%s", got)
	}
}

// Trust lives in the user's config folder, found from the environment handed in.
func TestTrustFile(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		t.Skipf("the XDG layout below is Linux's and the BSDs'; %s uses its own folder", runtime.GOOS)
	}
	for _, c := range []struct {
		env  cmdutil.Env
		want string
	}{
		{cmdutil.Env{"HOME": "/home/u"}, "/home/u/.config/halo/trust.json"},
		{cmdutil.Env{"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg"}, "/cfg/halo/trust.json"},
		{cmdutil.Env{"HOME": "/home/u", "XDG_CONFIG_HOME": "relative"}, "/home/u/.config/halo/trust.json"},
		{cmdutil.Env{"HOME": "relative"}, ""},
		{cmdutil.Env{}, ""},
	} {
		if got := TrustFile(c.env); got != c.want {
			t.Errorf("%v: %q, want %q", c.env, got, c.want)
		}
	}
}
