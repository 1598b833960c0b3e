package main

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"halolang.dev/halo/internal/treestate"
)

// TestPackageScripts runs testdata/pkgscript/*.txtar: the package commands (search, add,
// remove, install, pack, publish, and tools loading packages). They live in their own folder
// because they use three commands of their own, and a $HOME of their own (the user's trust
// file is $HOME/.config/halo/trust.json):
//
//	serve DIR            serve DIR over https (httptest) and set $SERVER to its URL; halo
//	                     trusts its certificate through SSL_CERT_FILE
//	treehash DIR FILE    write one line per file under DIR (mode and sha256) to FILE, so
//	                     `cmp` can assert that a refused command changed nothing (files
//	                     named *.hash and the server's notes are left out)
//	mkfile FILE SIZE     write SIZE bytes
func TestPackageScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/pkgscript",
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			// The user's trust file goes to $HOME/.config/halo: a home of the script's own,
			// outside $WORK so that treehash of the project does not see it.
			home, err := os.MkdirTemp("", "halo-home-")
			if err != nil {
				return err
			}
			env.Defer(func() { os.RemoveAll(home) })
			env.Setenv("HOME", home)
			// plugin_init.txtar builds a plugin against this checkout's SDK with the go command:
			// it needs the repository root, this platform, and the go command's own caches and
			// proxy. The checksum database is not consulted, so go mod tidy needs nothing the
			// module cache (or the proxy) lacks.
			root, err := filepath.Abs("../..")
			if err != nil {
				return err
			}
			env.Setenv("HALO_ROOT", root)
			env.Setenv("HOST_PLATFORM", runtime.GOOS+"/"+runtime.GOARCH)
			for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOTOOLCHAIN"} {
				out, err := exec.Command("go", "env", k).Output()
				if err != nil {
					return fmt.Errorf("go env %s: %w", k, err)
				}
				env.Setenv(k, strings.TrimSpace(string(out)))
			}
			env.Setenv("GOSUMDB", "off")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"serve":    serveCmd,
			"treehash": treehashCmd,
			"mkfile":   mkfileCmd,
		},
	})
}

var logMu sync.Mutex

func serveCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: serve DIR")
	}
	dir := ts.MkAbs(args[0])
	logFile := ts.MkAbs("server.log")
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logMu.Lock()
		f, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%s %s\n", r.Method, r.URL.Path)
			f.Close()
		}
		logMu.Unlock()
		http.FileServer(http.Dir(dir)).ServeHTTP(w, r)
	}))
	ts.Defer(srv.Close)
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	certFile := ts.MkAbs("server-cert.pem")
	if err := os.WriteFile(certFile, cert, 0o644); err != nil {
		ts.Fatalf("%v", err)
	}
	ts.Setenv("SSL_CERT_FILE", certFile)
	ts.Setenv("SERVER", srv.URL)
}

func treehashCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: treehash DIR FILE")
	}
	desc, err := treestate.Describe(ts.MkAbs(args[0]), func(rel string) bool {
		return strings.HasSuffix(rel, ".hash") || rel == "server.log" || strings.HasPrefix(rel, "server-cert") // the test's own notes
	})
	if err != nil {
		ts.Fatalf("%v", err)
	}
	if err := os.WriteFile(ts.MkAbs(args[1]), []byte(desc+"\n"), 0o644); err != nil {
		ts.Fatalf("%v", err)
	}
}

func mkfileCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mkfile FILE SIZE")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("%v", err)
	}
	p := ts.MkAbs(args[0])
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o644); err != nil {
		ts.Fatalf("%v", err)
	}
}
