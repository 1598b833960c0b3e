package main

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"aead.dev/minisign"
)

var releaseFlag = flag.Bool("release", false, "build a release and use it as a new user would (scripts/test.sh runs it as its own step)")

// The version the test releases: a pre-release, so no real one is ever mistaken for it.
const testVersion = "0.0.1-ci.1"

// TestReleaseFromOutside builds a release for this platform with scripts/release.sh into a
// temporary folder and uses it as someone who has never seen the repository would (issue 26):
// in a fresh HOME, GOPATH and module cache, with the release's module proxy tree first in
// GOPROXY, `go install halolang.dev/halo/cmd/halo@vVERSION` builds halo (and the same bytes as
// the release's binary); halo plugin init without --sdk writes a go.mod with no replace, whose
// go mod tidy and go test pass; halo pack packs it; another project adds the package with
// --trust and a pipeline calls it through its plugin; the default registry offers world-time,
// which halo add downloads from the release; and install.sh, against the release served on
// 127.0.0.1, installs halo, and installs nothing when a download fails its checksum or
// signature. The machine's module cache is a second proxy (file://) and the build cache is
// shared, so nothing is downloaded from the network and halo compiles once.
func TestReleaseFromOutside(t *testing.T) {
	if !*releaseFlag {
		t.Skip("builds a release and halo with it (a few minutes): run with -args -release, as scripts/test.sh does")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	out := filepath.Join(tmp, "release")
	srv := newReleaseServer(out)
	defer srv.Close()

	// The release is signed with a key made for the test; install.sh is built with its public half.
	_, priv, err := minisign.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	keyText, err := priv.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(tmp, "release.key")
	if err := os.WriteFile(keyFile, keyText, 0o600); err != nil {
		t.Fatal(err)
	}

	goEnv := func(name string) string {
		b, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	modcache, gocache, goproxy := goEnv("GOMODCACHE"), goEnv("GOCACHE"), goEnv("GOPROXY")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	rel := exec.Command(filepath.Join(root, "scripts", "release.sh"), testVersion, out)
	rel.Dir = root
	rel.Env = append(os.Environ(), "HALO_RELEASE_PLATFORMS="+runtime.GOOS+"/"+runtime.GOARCH, "HALO_RELEASE_URL="+srv.URL, "HALO_SIGN_KEY="+keyFile)
	if b, err := rel.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, b)
	}
	t.Logf("release.sh: %v", time.Since(start).Round(time.Second))

	// A new user: nothing of this machine but Go and its caches.
	home := filepath.Join(tmp, "home")
	gopath := filepath.Join(tmp, "gopath")
	env := []string{
		"HOME=" + home, "GOPATH=" + gopath, "GOMODCACHE=" + filepath.Join(gopath, "pkg", "mod"), "GOCACHE=" + gocache,
		"PATH=" + filepath.Join(gopath, "bin") + string(os.PathListSeparator) + filepath.Dir(goBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"GOPROXY=file://" + filepath.Join(out, "goproxy") + ",file://" + filepath.Join(modcache, "cache", "download") + "," + goproxy,
		"GONOSUMDB=halolang.dev/halo", "GOFLAGS=-modcacherw -trimpath", "CGO_ENABLED=0", "GOTOOLCHAIN=local", "NO_COLOR=1",
	}
	if v, ok := os.LookupEnv("TMPDIR"); ok {
		env = append(env, "TMPDIR="+v)
	}
	run := func(dir string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		began := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		t.Logf("%s %s: %v", filepath.Base(name), strings.Join(args, " "), time.Since(began).Round(100*time.Millisecond))
		return stdout.String() + stderr.String()
	}
	for _, d := range []string{home, gopath} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// go install, as the release itself was built: the same bytes.
	run(home, "go", "install", "-ldflags=-s -w -buildid=", "halolang.dev/halo/cmd/halo@v"+testVersion)
	halo := filepath.Join(gopath, "bin", "halo")
	if got := run(home, halo, "version"); !strings.HasPrefix(got, "halo "+testVersion+" (commit ") {
		t.Fatalf("halo version: %q", got)
	}
	if got := run(home, halo, "--version"); !strings.HasPrefix(got, "halo "+testVersion+" ") {
		t.Fatalf("halo --version: %q", got)
	}
	released := filepath.Join(out, fmt.Sprintf("halo_%s_%s_%s", testVersion, runtime.GOOS, runtime.GOARCH), "halo")
	if a, b := mustRead(t, halo), mustRead(t, released); !bytes.Equal(a, b) {
		t.Errorf("go install built other bytes (%d) than the release's halo (%d): the build is not reproducible", len(a), len(b))
	}

	// A plugin author's project, against the released SDK.
	run(home, halo, "plugin", "init", "greeter", "--module", "example.com/greeter")
	greeter := filepath.Join(home, "greeter")
	if gomod := string(mustRead(t, filepath.Join(greeter, "go.mod"))); strings.Contains(gomod, "replace") || !strings.Contains(gomod, "require halolang.dev/halo/sdk v") {
		t.Fatalf("go.mod:\n%s", gomod)
	}
	run(greeter, "go", "mod", "tidy")
	run(greeter, "go", "test", "./...")
	packed := run(greeter, halo, "pack", ".")
	for i, p := range []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"} {
		if want := fmt.Sprintf("[%d/4] %s (Greeter)\n", i+1, p); !strings.Contains(packed, want) {
			t.Errorf("halo pack printed no %q:\n%s", want, packed)
		}
	}
	pkgFile := filepath.Join(greeter, "greeter-0.1.0.halotool")
	if b := mustRead(t, pkgFile); bytes.Contains(b, []byte(`"path": "main.go"`)) || bytes.Contains(b, []byte(`"path": "go.sum"`)) {
		t.Error("halo pack packed the plugin's sources")
	}

	// Another project uses it, and world-time from the default registry.
	app := filepath.Join(home, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	added := run(app, halo, "add", "../greeter/greeter-0.1.0.halotool", "--trust")
	if !strings.Contains(added, "✓ greeter@0.1.0 → tool X : Greeter(...)") || !strings.Contains(added, "warning: halo.lock records greeter by its path outside this project") {
		t.Errorf("halo add:\n%s", added)
	}
	if found := run(app, halo, "search", "world-time"); !strings.Contains(found, "world-time") {
		t.Errorf("halo search world-time:\n%s", found)
	}
	if added := run(app, halo, "add", "world-time", "--trust"); !strings.Contains(added, "✓ world-time@1.0.0") {
		t.Errorf("halo add world-time:\n%s", added)
	}
	if err := os.WriteFile(filepath.Join(app, "main.halo"), []byte(`tool Hello : Greeter()
tool Clock : WorldTime()

pipeline Greet(who: String) -> JSON:
  who |> Hello.greet(name: who, excited: true)

pipeline Convert(time: String) -> JSON:
  time |> Clock.convert(time: time, from: "Europe/Paris", to: "Asia/Tokyo")
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(app, halo, "run", "main.halo", "Greet", "--input", "who=Ada", "--json"); !strings.Contains(got, "Hello, Ada!") {
		t.Errorf("halo run Greet:\n%s", got)
	}
	if got := run(app, halo, "run", "main.halo", "Convert", "--input", "time=2026-07-01 09:30", "--json"); !strings.Contains(got, "2026-07-01 16:30") {
		t.Errorf("halo run Convert:\n%s", got)
	}

	// install.sh, from the release served on 127.0.0.1.
	installSh := filepath.Join(out, "install.sh")
	install := func(t *testing.T, path string) (string, string, error) {
		dir := filepath.Join(t.TempDir(), "bin")
		cmd := exec.Command("sh", installSh, "--dir", dir)
		cmd.Env = append(os.Environ(), "HOME="+home)
		if path != "" {
			cmd.Env = append(cmd.Env, "PATH="+path)
		}
		b, err := cmd.CombinedOutput()
		return dir, string(b), err
	}
	t.Run("install.sh", func(t *testing.T) {
		began := time.Now()
		dir, log, err := install(t, "")
		if err != nil {
			t.Fatalf("install.sh: %v\n%s", err, log)
		}
		t.Logf("install.sh: %v", time.Since(began).Round(10*time.Millisecond))
		if !strings.Contains(log, "SHA256SUMS: signed by the release key") || !strings.Contains(log, "✓ installed halo "+testVersion) {
			t.Errorf("install.sh:\n%s", log)
		}
		if got, err := exec.Command(filepath.Join(dir, "halo"), "version").Output(); err != nil || !strings.HasPrefix(string(got), "halo "+testVersion) {
			t.Errorf("the installed halo: %q %v", got, err)
		}
	})
	t.Run("install.sh without minisign checks the signature with OpenSSL", func(t *testing.T) {
		if _, err := exec.LookPath("minisign"); err != nil {
			t.Fatalf("minisign is not installed (scripts/setup-test-deps.sh installs it): %v", err)
		}
		path := pathWithout(t, "minisign")
		dir, log, err := install(t, path)
		if err != nil || !strings.Contains(log, "signed by the release key") {
			t.Fatalf("install.sh: %v\n%s", err, log)
		}
		if _, err := os.Stat(filepath.Join(dir, "halo")); err != nil {
			t.Fatal(err)
		}
		srv.set("bad-signature")
		defer srv.set("")
		dir, log, err = install(t, path)
		if err == nil || !strings.Contains(log, "SHA256SUMS.minisig: the signature of SHA256SUMS does not verify") {
			t.Fatalf("a bad signature, checked with OpenSSL: %v\n%s", err, log)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Error("install.sh wrote into the folder")
		}
	})
	for _, c := range []struct{ mode, want string }{
		{"bad-checksum", fmt.Sprintf("halo_%s_%s_%s/halo: its sha256 is", testVersion, runtime.GOOS, runtime.GOARCH)},
		{"bad-signature", "SHA256SUMS.minisig: the signature of SHA256SUMS does not verify"},
		{"changed-sums", "SHA256SUMS.minisig: the signature of SHA256SUMS does not verify"},
		{"no-signature", "SHA256SUMS.minisig is missing, but this release is signed"},
	} {
		t.Run("install.sh refuses: "+c.mode, func(t *testing.T) {
			srv.set(c.mode)
			defer srv.set("")
			dir, log, err := install(t, "")
			if err == nil || !strings.Contains(log, c.want) || !strings.Contains(log, "nothing was installed") {
				t.Fatalf("install.sh: %v\n%s\nwant %q", err, log, c.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Error("install.sh wrote into the folder")
			}
		})
	}
}

// releaseServer serves a release folder on 127.0.0.1, and can tamper with it as an attacker
// between the release and the user would.
type releaseServer struct {
	*httptest.Server
	mu   sync.Mutex
	mode string
}

func newReleaseServer(dir string) *releaseServer {
	s := &releaseServer{}
	files := http.FileServer(http.Dir(dir))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		mode := s.mode
		s.mu.Unlock()
		switch {
		case mode == "bad-checksum" && strings.HasSuffix(r.URL.Path, "/halo"):
			w.Write([]byte("#!/bin/sh\necho not halo\n"))
		case mode == "bad-signature" && strings.HasSuffix(r.URL.Path, "/SHA256SUMS.minisig"):
			_, other, _ := minisign.GenerateKey(nil)
			sums, _ := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
			w.Write(minisign.Sign(other, sums))
		case mode == "changed-sums" && strings.HasSuffix(r.URL.Path, "/SHA256SUMS"):
			sums, _ := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
			w.Write(append(sums, []byte("0000000000000000000000000000000000000000000000000000000000000000  ./extra\n")...))
		case mode == "no-signature" && strings.HasSuffix(r.URL.Path, "/SHA256SUMS.minisig"):
			http.NotFound(w, r)
		default:
			files.ServeHTTP(w, r)
		}
	}))
	return s
}

func (s *releaseServer) set(mode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = mode
}

// pathWithout returns a PATH of one folder holding links to every program on this PATH but
// those named.
func pathWithout(t *testing.T, names ...string) string {
	dir := t.TempDir()
	skip := map[string]bool{}
	for _, n := range names {
		skip[n] = true
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if skip[e.Name()] {
				continue
			}
			link := filepath.Join(dir, e.Name())
			if _, err := os.Lstat(link); err == nil {
				continue // an earlier folder on PATH wins
			}
			_ = os.Symlink(filepath.Join(d, e.Name()), link)
		}
	}
	return dir
}

func mustRead(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
