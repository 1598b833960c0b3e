// Package pgtest starts a throwaway PostgreSQL cluster for tests: initdb into a temporary
// folder, then a server that listens on a Unix socket only (no TCP port), run as the
// `postgres` user when the tests run as root (PostgreSQL refuses to run as root) and as the
// test's own user otherwise. Each test gets a database of its own.
//
// scripts/setup-test-deps.sh installs the server (Debian's postgresql package) when it is
// missing. Without it a test fails when CI is set, and is skipped with the reason otherwise.
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//	func TestX(t *testing.T) { dsn := pgtest.DB(t) ... }
package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Port names the socket file; nothing listens on TCP.
const port = "5432"

// A Cluster is a running throwaway server.
type Cluster struct {
	// Dir holds the data folder and the socket.
	Dir    string
	Socket string
	bin    string
	cred   *credential
	cmd    *exec.Cmd
	done   chan struct{}
	log    *bytes.Buffer
}

var (
	once    sync.Once
	shared  *Cluster
	initErr error
	dbs     atomic.Int64
)

// Main runs the tests and then stops the cluster, if one was started.
func Main(m *testing.M) int {
	code := m.Run()
	Stop()
	return code
}

// Stop stops the package's cluster, if one was started: for a TestMain that cannot use Main.
func Stop() {
	if shared != nil {
		shared.Stop()
	}
}

// Get returns the package's cluster, started on first use; t fails (CI) or is skipped
// (elsewhere) when PostgreSQL is not installed.
func Get(t testing.TB) *Cluster {
	t.Helper()
	once.Do(func() { shared, initErr = Start() })
	if errors.Is(initErr, errNotInstalled) {
		if os.Getenv("CI") != "" {
			t.Fatalf("pgtest: %v: run scripts/setup-test-deps.sh (it installs Debian's postgresql)", initErr)
		}
		t.Skipf("pgtest: %v: run scripts/setup-test-deps.sh to run this test (CI always runs it)", initErr)
	}
	if initErr != nil {
		t.Fatalf("pgtest: %v", initErr)
	}
	return shared
}

// DB creates an empty database for t on the package's cluster and returns its URL.
func DB(t testing.TB) string {
	t.Helper()
	c := Get(t)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbs.Add(1))
	if err := c.CreateDB(name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return c.URL(name)
}

var errNotInstalled = errors.New("PostgreSQL's initdb and postgres are not installed")

// binDir finds initdb and postgres: on PATH, or in Debian's /usr/lib/postgresql/<v>/bin.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errNotInstalled
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// A credential is the user the server runs as when the tests run as root.
type credential struct{ uid, gid int }

// Start makes and starts a cluster.
func Start() (*Cluster, error) {
	if !supported {
		return nil, errNotInstalled
	}
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, Socket: filepath.Join(dir, "sock"), bin: bin, log: &bytes.Buffer{}}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			u, err = user.Lookup("halo-test")
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root, the server needs the user postgres (or halo-test) to run as: run scripts/setup-test-deps.sh")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &credential{uid: uid, gid: gid}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if err := os.Mkdir(c.Socket, 0o700); err != nil {
		return nil, err
	}
	if c.cred != nil {
		os.Chown(c.Socket, c.cred.uid, c.cred.gid)
	}
	data := filepath.Join(dir, "data")
	initdb := c.command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C")
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	c.cmd = c.command(filepath.Join(bin, "postgres"), "-D", data, "-k", c.Socket, "-p", port,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=32MB")
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if err := c.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c.done = make(chan struct{})
	go func() { c.cmd.Wait(); close(c.done) }()
	sock := filepath.Join(c.Socket, ".s.PGSQL."+port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if conn, err := net.Dial("unix", sock); err == nil {
			conn.Close()
			// The socket accepts before the server takes queries: ask until it answers.
			if _, err := c.psql("postgres", "SELECT 1"); err == nil {
				return c, nil
			}
		}
		select {
		case <-c.done:
			os.RemoveAll(dir)
			return nil, fmt.Errorf("postgres exited: %s", c.log)
		default:
		}
		if time.Now().After(deadline) {
			c.Stop()
			return nil, fmt.Errorf("postgres did not start in 60s: %s", c.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = c.Dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	setProcAttr(cmd, c.cred)
	return cmd
}

func (c *Cluster) psql(db, sql string) ([]byte, error) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		psql = filepath.Join(c.bin, "psql")
	}
	cmd := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", c.Socket, "-p", port, "-U", "postgres", "-d", db, "-c", sql)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PGCONNECT_TIMEOUT=5"}
	return cmd.CombinedOutput()
}

// CreateDB creates database name.
func (c *Cluster) CreateDB(name string) error {
	if out, err := c.psql("postgres", "CREATE DATABASE "+name); err != nil {
		return fmt.Errorf("create database %s: %v: %s", name, err, out)
	}
	return nil
}

// URL is the connection URL of database name, for pgx and `halo serve --store`.
func (c *Cluster) URL(name string) string {
	return fmt.Sprintf("postgres://postgres@/%s?host=%s&port=%s&sslmode=disable", name, c.Socket, port)
}

// Stop stops the server (its whole process group) and removes its folder.
func (c *Cluster) Stop() {
	if c.cmd != nil && c.cmd.Process != nil {
		stopGroup(c.cmd.Process.Pid, false) // fast shutdown
		select {
		case <-c.done:
		case <-time.After(20 * time.Second):
			stopGroup(c.cmd.Process.Pid, true)
			<-c.done
		}
	}
	if strings.HasPrefix(c.Dir, os.TempDir()) {
		os.RemoveAll(c.Dir)
	}
}

// VectorDB is DB with the pgvector extension made in it (CREATE EXTENSION vector), for the
// PostgreSQL VectorStore. scripts/setup-test-deps.sh builds pgvector from third_party/pgvector
// into the server the cluster runs; without it t fails when CI is set, and is skipped with
// the reason otherwise.
func VectorDB(t testing.TB) string {
	t.Helper()
	c := Get(t)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbs.Add(1))
	if err := c.CreateDB(name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	if out, err := c.psql(name, "CREATE EXTENSION vector"); err != nil {
		msg := fmt.Sprintf("pgtest: pgvector is not installed in the server in %s (%v: %s): run scripts/setup-test-deps.sh as root, which builds it from third_party/pgvector", c.bin, err, bytes.TrimSpace(out))
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return c.URL(name)
}
