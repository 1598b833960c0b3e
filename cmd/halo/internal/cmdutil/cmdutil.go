// Package cmdutil holds what every halo command is handed: the IO streams, the environment
// read once at start-up, the clock, the working folder and the logger (the Factory), and the
// exit statuses, decided in one place.
package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Exit statuses of the halo command. docs/cli.md documents them; never renumber one.
const (
	ExitOK     = 0 // success
	ExitFailed = 1 // the command failed (invalid files, a failed run, a refused package)
	ExitUsage  = 2 // bad flags or arguments
	ExitPaused = 3 // a run paused waiting for input (halo run, halo resume)
	ExitCancel = 130
)

// Codes of failures that several commands report (docs/cli.md, "Command error codes").
const (
	// CodeFileExists: a command that only creates files (halo init, halo plugin init) found
	// them there already, and wrote nothing.
	CodeFileExists = "FILE_EXISTS"
	// CodeNoPipeline: halo serve or halo mcp was given files that declare no pipeline.
	CodeNoPipeline = "NO_PIPELINE"
	// CodeListen: halo serve could not listen on its --addr (in use, not permitted).
	CodeListen = "LISTEN_FAILED"
)

// IOStreams are the command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// InTTY and OutTTY report whether stdin/stdout are terminals.
	InTTY, OutTTY bool
	// ErrTTY reports whether stderr is a terminal (halo run shows progress there).
	ErrTTY bool
}

// Env is the process environment, read once in main and handed down. Nothing below
// cmd/halo calls os.Getenv.
type Env map[string]string

// UserDir is one of the user's folders, found as os.UserConfigDir finds the config folder but
// from e: on Linux and BSD $<xdgVar> when it is absolute, else $HOME/<xdgDefault>; on macOS
// $HOME/Library/Application Support; on Windows %<windowsVar>%. "" when e names none.
func (e Env) UserDir(xdgVar, xdgDefault, windowsVar string) string {
	dir := ""
	switch runtime.GOOS {
	case "windows":
		dir = e.Get(windowsVar)
	case "darwin", "ios":
		if h := e.Get("HOME"); h != "" {
			dir = filepath.Join(h, "Library", "Application Support")
		}
	default:
		dir = e.Get(xdgVar)
		if !filepath.IsAbs(dir) {
			dir = ""
			if h := e.Get("HOME"); h != "" {
				dir = filepath.Join(h, xdgDefault)
			}
		}
	}
	if !filepath.IsAbs(dir) {
		return ""
	}
	return dir
}

// EnvFromList builds an Env from "K=V" strings (os.Environ's shape).
func EnvFromList(list []string) Env {
	env := Env{}
	for _, kv := range list {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// Lookup reads one variable.
func (e Env) Lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

// Get reads one variable, "" when unset.
func (e Env) Get(k string) string { return e[k] }

// List returns the environment as sorted "K=V" strings.
func (e Env) List() []string {
	out := make([]string, 0, len(e))
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Factory is what a command is built from. Tests make one with buffers and a fake env.
type Factory struct {
	IO  IOStreams
	Env Env
	// Now is the clock.
	Now func() time.Time
	// Dir is the working folder; relative paths on the command line resolve against it.
	Dir string
	// Executable is the path of the running halo binary, for re-executing itself as a plugin.
	Executable string
	// Logger writes to ErrOut at the level --log-level chose. Set by the root command.
	Logger hclog.Logger
}

// ColorEnabled reports whether output to Out may use colour: a terminal, and NO_COLOR unset.
func (f *Factory) ColorEnabled() bool {
	if _, ok := f.Env.Lookup("NO_COLOR"); ok {
		return false
	}
	return f.IO.OutTTY
}

// Abs resolves p against the working folder.
func (f *Factory) Abs(p string) string {
	if p == "" || strings.HasPrefix(p, "/") {
		return p
	}
	if f.Dir == "" {
		return p
	}
	return f.Dir + string(os.PathSeparator) + p
}

// An ExitError carries the exit status a command wants. Its message, when not empty, is
// printed to stderr by the root command.
type ExitError struct {
	Status int
	Err    error
	// AfterStop says the command failed after a signal stopped it as it is meant to stop
	// (a server): the exit status is Status, not ExitCancel, since nothing was interrupted.
	AfterStop bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Status)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Silent returns an error that sets the exit status and prints nothing more (the command
// already reported what went wrong).
func Silent(status int) error { return &ExitError{Status: status} }

// FlagError marks bad usage where it arises (a flag's value, a missing argument); it exits
// with ExitUsage. The root command marks cobra's own flag and argument errors the same way.
func FlagError(format string, args ...any) error {
	return &ExitError{Status: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// UsageError marks err as bad usage: it exits with ExitUsage and prints err's message.
func UsageError(err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Status: ExitUsage, Err: err}
}

// FailedAfterStop marks err, a failure of a server that a signal stopped, as exiting with
// ExitFailed (1) rather than ExitCancel: the signal is how a server is meant to stop.
func FailedAfterStop(err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Status: ExitFailed, Err: err, AfterStop: true}
}

// Interrupted says whether a command that failed while the process was being stopped by a
// signal exits with ExitCancel: every failure does but one marked FailedAfterStop.
func Interrupted(err error) bool {
	var ee *ExitError
	return err != nil && !(errors.As(err, &ee) && ee.AfterStop)
}

// StatusOf maps an error returned by a command to an exit status.
func StatusOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Status
	}
	return ExitFailed
}

// ShellQuote quotes s for a POSIX shell when it needs it, for a command a message suggests.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
