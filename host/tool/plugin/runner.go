package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"

	sandboxpkg "halolang.dev/halo/host/tool/sandbox"
)

// procRunner is the go-plugin runner for every plugin the host starts. go-plugin's own runner
// hands the plugin the host's standard input and kills only the plugin's own process; this one
// gives it /dev/null, starts it in a session of its own (so without a controlling terminal,
// and in its own process group) with a parent-death signal (and, on Linux, in its own PID
// namespace: see isolation_linux.go), starts it from a confined thread (Command.Sandbox, or
// at least sandbox.RestrictThread), and kills the whole group when the plugin is stopped or
// ends.
type procRunner struct {
	logger    hclog.Logger
	name      string
	cmd       *exec.Cmd
	stdout    io.ReadCloser
	stderr    io.ReadCloser
	socketDir string
	sandbox   func(env []string) error
	// plan lists the isolations to try, best first; isolation is the one being tried, then
	// the one the plugin runs in.
	plan      []isolation
	isolation isolation
	// ended is closed when the plugin has ended and been reaped: the thread a confined plugin
	// was started from may end then, and not before.
	ended     chan struct{}
	endedOnce sync.Once

	mu     sync.Mutex
	pid    int
	waited bool
	// network and addr are where the plugin's handshake says it listens.
	network, addr string
	// dialErr is why the last connection to the plugin was refused (dialPlugin).
	dialErr error
	// pin is the pinned executable the plugin is started from, when it has a pin; released
	// once the start is over.
	pin *pinned
	// beforeExec is Options.beforeExec.
	beforeExec func()
	// maxProcs limits the plugin's processes and threads (pids_linux.go), 0 for none; cgroup
	// is the plugin's pids cgroup, when it has one.
	maxProcs int
	cgroup   *pidsCgroup
}

var _ runner.Runner = (*procRunner)(nil)

// An isolation is the set of namespaces a plugin starts in: see isolation_linux.go. Outside
// Linux there is only isolateNone.
type isolation int

const (
	isolateNone isolation = iota
	isolatePID
	isolateUserPID
)

func (i isolation) String() string {
	switch i {
	case isolatePID:
		return "PID namespace"
	case isolateUserPID:
		return "user and PID namespaces"
	}
	return "no namespaces"
}

// newProcRunner prepares cmd. namespaces asks for namespaces where the system has them;
// sandbox is Command.Sandbox; userNS is Options.UserNamespace.
func newProcRunner(logger hclog.Logger, name string, cmd *exec.Cmd, socketDir string, namespaces bool, sandbox func([]string) error, userNS bool, maxProcs int) (*procRunner, error) {
	plan := isolations(namespaces, userNS)
	r := &procRunner{logger: logger, name: name, cmd: cmd, socketDir: socketDir, sandbox: sandbox, plan: plan, isolation: plan[0], ended: make(chan struct{}), maxProcs: maxProcs}
	if err := r.prepare(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *procRunner) prepare() error {
	// go-plugin sets Stdin to the host's; a plugin never reads it, and a terminal there would
	// let it read what the user types.
	r.cmd.Stdin = nil
	r.cmd.SysProcAttr = sysProcAttr(r.isolation)
	var err error
	if r.stdout, err = r.cmd.StdoutPipe(); err != nil {
		return err
	}
	if r.stderr, err = r.cmd.StderrPipe(); err != nil {
		return err
	}
	return nil
}

func (r *procRunner) Start(ctx context.Context) error {
	if r.pin != nil {
		defer r.pin.Close()
		if r.beforeExec != nil {
			r.beforeExec()
		}
	}
	if err := r.startConfined(ctx); err != nil {
		return err
	}
	if r.pin != nil {
		if err := r.pin.verifyStarted(); err != nil {
			// What runs may not be what was hashed: stop it before it is sent anything.
			_ = r.Kill(ctx)
			_ = r.Wait(ctx)
			return fmt.Errorf("start plugin %s: %w", r.name, err)
		}
	}
	return nil
}

func (r *procRunner) startConfined(ctx context.Context) error {
	confine := r.sandbox
	if confine == nil {
		// Every plugin starts from a thread whose programs hold no capability and cannot gain
		// one (outside a user namespace, a root host's plugin would hold its capabilities),
		// under the seccomp filter every plugin gets (no terminal injection).
		confine = restrictThread()
	}
	if confine == nil {
		return r.start()
	}
	// The plugin is started from a thread of its own, confined first: the plugin inherits
	// the thread's restrictions from its first instruction, with no wrapper process to
	// start before it. The thread is kept until the plugin has been waited for: its
	// parent-death signal fires when the thread ends.
	env := r.cmd.Env
	if r.maxProcs > 0 {
		// The plugin's processes are limited by a cgroup of its own where the host may make
		// one, else by RLIMIT_NPROC in its user namespace (pids_linux.go).
		cg, err := newPidsCgroup(r.maxProcs)
		if err != nil {
			return fmt.Errorf("start plugin %s: %w", r.name, err)
		}
		r.cgroup = cg
	}
	err := sandboxpkg.StartFromThread(func() error {
		if r.cgroup != nil {
			// Before the thread is confined: Landlock would refuse the cgroup's files.
			if err := r.cgroup.join(); err != nil {
				return fmt.Errorf("start plugin %s: %w", r.name, err)
			}
		}
		if err := confine(env); err != nil {
			return fmt.Errorf("sandbox plugin %s: %w", r.name, err)
		}
		return nil
	}, r.start, r.ended)
	if r.cgroup != nil {
		// The plugin is in its cgroup: the thread it started from need not be.
		r.cgroup.leave()
	}
	if err != nil {
		if r.cgroup != nil {
			r.cgroup.remove()
		}
		return err
	}
	err = afterStart(r.isolation, r.PID())
	if err == nil && r.maxProcs > 0 && r.cgroup == nil {
		if rlimitApplies(r.isolation) {
			// In its own user namespace RLIMIT_NPROC counts the plugin's processes alone.
			err = limitProcesses(r.PID(), r.maxProcs)
		} else {
			r.logger.Debug("the plugin's processes are not limited", "plugin", r.name, "reason", pidsStatus())
		}
	}
	if err != nil {
		// go-plugin does not wait for a plugin whose start failed: reap it here, which also
		// lets its thread end.
		_ = r.Kill(ctx)
		_ = r.Wait(ctx)
		return fmt.Errorf("start plugin %s: %w", r.name, err)
	}
	return nil
}

// start starts the plugin in the first isolation of the plan the system allows.
func (r *procRunner) start() error {
	err := r.cmd.Start()
	for i := 1; err != nil && i < len(r.plan); i++ {
		next := r.plan[i]
		if next == isolateNone {
			// Some systems forbid user namespaces (a container's seccomp profile, an
			// AppArmor rule). Start without them and say so: the plugin still cannot read
			// the host's environment unless it runs with CAP_SYS_PTRACE (as root), but what
			// it starts in another process group can outlive a host that is killed.
			r.logger.Warn("cannot start the plugin in its own namespaces; starting it without them", "plugin", r.name, "tried", r.isolation.String(), "error", err)
		} else {
			r.logger.Debug("cannot start the plugin in its namespaces; trying others", "plugin", r.name, "tried", r.isolation.String(), "next", next.String(), "error", err)
		}
		old := r.cmd
		r.cmd = exec.Command(old.Path)
		r.cmd.Args, r.cmd.Env, r.cmd.Dir, r.cmd.ExtraFiles = old.Args, old.Env, old.Dir, old.ExtraFiles
		r.isolation = next
		if perr := r.prepare(); perr != nil {
			return perr
		}
		err = r.cmd.Start()
	}
	if err != nil {
		return fmt.Errorf("start plugin %s: %w", r.name, err)
	}
	r.mu.Lock()
	r.pid = r.cmd.Process.Pid
	r.mu.Unlock()
	r.logger.Debug("plugin started", "plugin", r.name, "pid", r.pid, "isolation", r.isolation.String(), "sandbox", r.sandbox != nil)
	return nil
}

func (r *procRunner) Wait(context.Context) error {
	err := r.cmd.Wait()
	r.mu.Lock()
	r.waited = true
	r.mu.Unlock()
	r.endedOnce.Do(func() { close(r.ended) })
	// Whatever the plugin left running in its group goes with it, and so does its socket.
	r.killGroup()
	if r.cgroup != nil {
		r.cgroup.remove()
	}
	if r.socketDir != "" {
		_ = os.RemoveAll(r.socketDir)
	}
	return err
}

func (r *procRunner) Kill(context.Context) error {
	r.killGroup()
	if r.cmd.Process != nil {
		if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return err
		}
	}
	return nil
}

func (r *procRunner) killGroup() {
	r.mu.Lock()
	pid := r.pid
	r.mu.Unlock()
	if pid > 0 {
		killGroup(pid)
	}
}

func (r *procRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *procRunner) Stderr() io.ReadCloser { return r.stderr }

// Name is what go-plugin names the plugin's logger after: the provider's name.
func (r *procRunner) Name() string { return r.name }

// exited reports whether the plugin process has ended and been reaped.
func (r *procRunner) exited() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waited
}

// PID returns the plugin's process id as the host sees it, or 0 before it started.
func (r *procRunner) PID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pid
}

func (r *procRunner) ID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pid == 0 {
		return ""
	}
	return strconv.Itoa(r.pid)
}

func (r *procRunner) Diagnose(context.Context) string {
	return fmt.Sprintf("%s did not answer the Halo plugin handshake: it may not be a Halo plugin, may be built for another system, or may have crashed at start (its log lines above say more)", r.cmd.Path)
}

// PluginToHost checks the address of the plugin's handshake line (and of any connection the
// plugin would hand go-plugin's broker): only a Unix socket directly inside the folder the
// host created for this plugin. A plugin without network that names a TCP address, or a
// socket elsewhere, would otherwise have the unconfined host connect there for it and send
// it every declaration and call.
func (r *procRunner) PluginToHost(network, addr string) (string, string, error) {
	if err := checkAddress(network, addr, r.socketDir); err != nil {
		return "", "", fmt.Errorf("plugin %s: %w", r.name, err)
	}
	r.mu.Lock()
	r.network, r.addr = network, addr
	r.mu.Unlock()
	return network, addr, nil
}

// checkAddress accepts a Unix socket directly inside dir, and nothing else.
func checkAddress(network, addr, dir string) error {
	if network != "unix" {
		return fmt.Errorf("its handshake names a %q address (%s); a plugin may listen only on a Unix socket in the folder the host made for it", network, addr)
	}
	if dir == "" || !filepath.IsAbs(addr) || filepath.Clean(addr) != addr || filepath.Dir(addr) != filepath.Clean(dir) {
		return fmt.Errorf("its handshake names the socket %s, outside the folder the host made for it (%s)", addr, dir)
	}
	return nil
}

// connected waits, up to timeout, until conn has connected to the plugin: the connection the
// first call would wait for, made now so that a socket the host refuses to talk to
// (dialPlugin) fails the start with the reason rather than the first call with a broken
// connection.
func (r *procRunner) connected(conn *grpc.ClientConn, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn.Connect()
	for {
		state := conn.GetState()
		switch state {
		case connectivity.Ready:
			return nil
		case connectivity.TransientFailure, connectivity.Shutdown:
			r.mu.Lock()
			err := r.dialErr
			r.mu.Unlock()
			if err == nil {
				err = fmt.Errorf("cannot connect to the plugin's socket (%s)", state)
			}
			return err
		}
		if !conn.WaitForStateChange(ctx, state) {
			return fmt.Errorf("the plugin's socket did not accept a connection in %s", timeout)
		}
	}
}

// dial connects to the Unix socket of the plugin's handshake, and checks that the plugin
// process is the one listening on it (dialPlugin).
func (r *procRunner) dial(ctx context.Context) (net.Conn, error) {
	r.mu.Lock()
	network, addr, pid := r.network, r.addr, r.pid
	r.mu.Unlock()
	if err := checkAddress(network, addr, r.socketDir); err != nil {
		return nil, err
	}
	conn, err := dialPlugin(ctx, addr, pid)
	r.mu.Lock()
	r.dialErr = err
	r.mu.Unlock()
	return conn, err
}

func (r *procRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
