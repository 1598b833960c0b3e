package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"
)

// procRunner is the go-plugin runner for every plugin the host starts. go-plugin's own runner
// hands the plugin the host's standard input and kills only the plugin's own process; this one
// gives it /dev/null, starts it in its own process group with a parent-death signal (and, on
// Linux, in its own user and PID namespaces: see isolation_linux.go), and kills the whole
// group when the plugin is stopped or ends.
type procRunner struct {
	logger     hclog.Logger
	name       string
	cmd        *exec.Cmd
	stdout     io.ReadCloser
	stderr     io.ReadCloser
	socketDir  string
	namespaces bool

	mu     sync.Mutex
	pid    int
	waited bool
}

var _ runner.Runner = (*procRunner)(nil)

func newProcRunner(logger hclog.Logger, name string, cmd *exec.Cmd, socketDir string, namespaces bool) (*procRunner, error) {
	r := &procRunner{logger: logger, name: name, cmd: cmd, socketDir: socketDir, namespaces: namespaces}
	if err := r.prepare(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *procRunner) prepare() error {
	// go-plugin sets Stdin to the host's; a plugin never reads it, and a terminal there would
	// let it read what the user types.
	r.cmd.Stdin = nil
	r.cmd.SysProcAttr = sysProcAttr(r.namespaces)
	var err error
	if r.stdout, err = r.cmd.StdoutPipe(); err != nil {
		return err
	}
	if r.stderr, err = r.cmd.StderrPipe(); err != nil {
		return err
	}
	return nil
}

func (r *procRunner) Start(context.Context) error {
	err := r.cmd.Start()
	if err != nil && r.namespaces {
		// Some systems forbid user namespaces (a container's seccomp profile, an AppArmor
		// rule). Start again without them and say so: the plugin still cannot read the
		// host's environment unless it runs with CAP_SYS_PTRACE (as root), but what it
		// starts in another process group can outlive a host that is killed.
		r.logger.Warn("cannot start the plugin in its own user and PID namespaces; starting it without them", "plugin", r.name, "error", err)
		old := r.cmd
		r.cmd = exec.Command(old.Path)
		r.cmd.Args, r.cmd.Env, r.cmd.Dir, r.cmd.ExtraFiles = old.Args, old.Env, old.Dir, old.ExtraFiles
		r.namespaces = false
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
	r.logger.Debug("plugin started", "plugin", r.name, "pid", r.pid, "namespaces", r.namespaces)
	return nil
}

func (r *procRunner) Wait(context.Context) error {
	err := r.cmd.Wait()
	r.mu.Lock()
	r.waited = true
	r.mu.Unlock()
	// Whatever the plugin left running in its group goes with it, and so does its socket.
	r.killGroup()
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

func (r *procRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *procRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
