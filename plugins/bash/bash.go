// Package bash owns the built-in Bash provider: run(command) executes `bash -c command` in
// a configured folder with a time limit and returns its exit code and output. It is a
// plugin: the halo binary serves it out of process (`halo __plugin bash`), and it depends on
// the SDK alone.
//
// Each command runs in a session of its own (its own process group, and no controlling
// terminal), and the whole group is killed when the time
// limit passes or the call is cancelled, so a command's children and grandchildren die with
// it. Output beyond a cap is cut, keeping its start and its end, with a note saying so.
package bash

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// A Config is one Bash declaration's settings.
type Config struct {
	// Shell is the shell executable; "bash" (found on PATH) when empty.
	Shell string
	// Dir is the folder commands run in.
	Dir string
	// Timeout bounds each command; zero means DefaultTimeout.
	Timeout time.Duration
	// Env is the commands' whole environment ("K=V"). The plugin hands in its own clean
	// environment (PATH, HOME and the variables the declaration names), never the host's.
	Env []string
	// MaxOutput caps stdout and stderr, each; zero means DefaultMaxOutput.
	MaxOutput int
}

// Defaults of a Bash declaration without options.
const (
	DefaultTimeout   = 60 * time.Second
	DefaultMaxOutput = 64 << 10
)

// waitDelay is how long Run waits for output after the shell exits. A grandchild that left
// the process group (setsid) may keep the pipes open; Run stops waiting for it then.
const waitDelay = 2 * time.Second

// A Result is what run returns.
type Result struct {
	// ExitCode is the shell's exit status; -1 when it was killed.
	ExitCode int    `json:"exitCode"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	// TimedOut is set when the time limit killed the command.
	TimedOut bool `json:"timedOut,omitempty"`
	// Truncated is set when stdout or stderr was cut; the cut text carries a note.
	Truncated bool `json:"truncated,omitempty"`
}

// ErrEmptyCommand is returned for an empty command.
var ErrEmptyCommand = errors.New("command is empty")

// Run runs command with bash -c. A non-zero exit status is a result, not an error: the model
// reads it. An error means the shell could not be started or ctx was cancelled; in every
// case the whole process group has been killed before Run returns.
func Run(ctx context.Context, cfg Config, command string) (Result, error) {
	if command == "" {
		return Result{}, ErrEmptyCommand
	}
	shell := cfg.Shell
	if shell == "" {
		shell = "bash"
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	limit := cfg.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.Command(shell, "-c", command)
	cmd.Dir = cfg.Dir
	cmd.Env = cfg.Env
	if cmd.Env == nil {
		cmd.Env = []string{} // never inherit: nil would mean the plugin's environment
	}
	// stdin stays nil: the command reads /dev/null, never the plugin's stdin.
	stdout := newCapped(limit)
	stderr := newCapped(limit)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = procAttr()
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("start %s: %w", shell, err)
	}
	pgid := cmd.Process.Pid
	done := make(chan struct{})
	killedc := make(chan bool, 1)
	go func() { // owned by Run, which reads killedc before returning
		select {
		case <-runCtx.Done():
			killGroup(pgid)
			killedc <- true
		case <-done:
			killedc <- false
		}
	}()
	waitErr := cmd.Wait()
	close(done)
	killed := <-killedc
	// Whatever happened, nothing of the command outlives the call: kill what is left of the
	// group (background jobs the shell did not wait for).
	killGroup(pgid)

	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	res.Truncated = stdout.cut() || stderr.cut()
	if killed {
		res.ExitCode = -1
		if ctx.Err() != nil {
			return res, fmt.Errorf("command cancelled: %w", ctx.Err())
		}
		res.TimedOut = true
		res.Stderr += fmt.Sprintf("\n[halo: command killed after %s time limit]\n", timeout)
		return res, nil
	}
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &ee):
		res.ExitCode = ee.ExitCode()
	case errors.Is(waitErr, exec.ErrWaitDelay):
		// The shell exited but something it started kept the output open.
		res.ExitCode = cmd.ProcessState.ExitCode()
	default:
		return res, fmt.Errorf("wait for %s: %w", shell, waitErr)
	}
	return res, nil
}

func killGroup(pgid int) {
	// Negative pid: the whole process group. ESRCH (already gone) is fine.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// capped keeps the first and last half of what is written beyond its limit, and counts
// what it dropped.
type capped struct {
	limit   int
	head    bytes.Buffer
	tail    []byte // ring of the last limit/2 bytes once head is full
	tailPos int
	tailLen int
	dropped int64
}

func newCapped(limit int) *capped { return &capped{limit: limit} }

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	headMax := c.limit - c.limit/2
	if room := headMax - c.head.Len(); room > 0 {
		k := min(room, len(p))
		c.head.Write(p[:k])
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	tailMax := c.limit / 2
	if c.tail == nil {
		c.tail = make([]byte, tailMax)
	}
	for _, b := range p {
		if tailMax == 0 {
			c.dropped++
			continue
		}
		if c.tailLen == tailMax {
			c.dropped++ // the oldest tail byte falls out
		} else {
			c.tailLen++
		}
		c.tail[c.tailPos] = b
		c.tailPos = (c.tailPos + 1) % tailMax
	}
	return n, nil
}

func (c *capped) cut() bool { return c.dropped > 0 }

func (c *capped) String() string {
	if c.tailLen == 0 {
		return c.head.String()
	}
	var tail []byte
	if c.tailLen < len(c.tail) {
		tail = c.tail[:c.tailLen]
	} else {
		tail = append(append([]byte{}, c.tail[c.tailPos:]...), c.tail[:c.tailPos]...)
	}
	if c.dropped == 0 {
		return c.head.String() + string(tail)
	}
	return fmt.Sprintf("%s\n[halo: output cut, %d bytes left out]\n%s", c.head.String(), c.dropped, tail)
}
