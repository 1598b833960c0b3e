package bash

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"time"

	"halolang.dev/halo/sdk"
)

// Name is the provider name declarations use: `tool Tests : Bash(cwd: "./app", timeout_ms: 120000)`.
const Name = "Bash"

// RunMethod is the method that runs a command, and CommandArg its argument: the command line
// bash -c runs (runParams' json name).
const (
	RunMethod  = "run"
	CommandArg = "command"
)

// Options are a Bash declaration's arguments.
type Options struct {
	// Cwd is the folder commands run in (and may write); the project folder when empty.
	Cwd string `json:"cwd,omitempty"`
	// TimeoutMS bounds each command, in milliseconds; 60000 when zero.
	TimeoutMS float64 `json:"timeout_ms,omitempty"`
	// Env names host variables the commands may see, besides PATH, HOME and TMPDIR.
	Env []string `json:"env,omitempty"`
	// MaxOutput caps stdout and stderr, each, in bytes; 65536 when zero.
	MaxOutput float64 `json:"max_output,omitempty"`
	// Read lists more folders commands may read (on Linux, under the sandbox).
	Read []string `json:"read,omitempty"`
	// Write lists more folders commands may write.
	Write []string `json:"write,omitempty"`
	// Network, when false, cuts TCP and UDP where the kernel can (Landlock). Default true:
	// package managers and test runners often need it.
	Network *bool `json:"network,omitempty"`
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseOptions reads a declaration: Bash(cwd:, timeout_ms:, env: [...], max_output:, read:
// [...], write: [...], network: bool). Paths come back absolute. The host reads it the same
// way to decide what the sandbox grants.
func ParseOptions(d sdk.Declaration) (Options, error) {
	var o Options
	if err := d.Decode(&o, "cwd"); err != nil {
		return o, err
	}
	abs := func(p string) string {
		if p == "" {
			p = "."
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(d.ProjectDir, p)
		}
		return filepath.Clean(p)
	}
	o.Cwd = abs(o.Cwd)
	for i := range o.Read {
		o.Read[i] = abs(o.Read[i])
	}
	for i := range o.Write {
		o.Write[i] = abs(o.Write[i])
	}
	if o.TimeoutMS < 0 || o.MaxOutput < 0 {
		return o, errors.New("Bash: timeout_ms and max_output must be positive")
	}
	for _, n := range o.Env {
		if !envName.MatchString(n) {
			return o, fmt.Errorf("Bash: env: %q is not a variable name", n)
		}
	}
	return o, nil
}

// NetworkAllowed reports whether the declaration lets commands use the network.
func (o Options) NetworkAllowed() bool { return o.Network == nil || *o.Network }

type runParams struct {
	Command string `json:"command" jsonschema:"description=The command line; it runs with bash -c in the tool's folder"`
}

// baseVars are the variables every command gets when the plugin has them.
var baseVars = []string{"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TERM"}

// Provider returns the Bash provider. getenv reads the plugin's own environment, which the
// host limited to PATH, HOME, TMPDIR and the variables declarations name.
func Provider(getenv func(string) (string, bool)) sdk.Provider {
	run := sdk.NewMethod(RunMethod, "Run a shell command with bash -c in the tool's folder. Returns exitCode, stdout and stderr; long output is cut in the middle with a note, and a command over the time limit is killed with everything it started.", sdk.External,
		func(c *sdk.Call, p runParams) (Result, error) {
			cfg := sdk.StateOf[Config](c)
			if p.Command == "" {
				return Result{}, sdk.ArgumentError("run: command is empty")
			}
			c.Logger().Debug("run", "command", p.Command, "dir", cfg.Dir)
			return Run(c, cfg, p.Command)
		})
	return sdk.Provider{
		Name:        Name,
		Description: "Shell commands (bash -c) in one folder, with a time limit",
		Methods:     []sdk.Method{run},
		Configure: func(ctx context.Context, d sdk.Declaration) (sdk.Instance, error) {
			o, err := ParseOptions(d)
			if err != nil {
				return sdk.Instance{}, err
			}
			cfg := Config{
				Dir:       o.Cwd,
				Timeout:   time.Duration(o.TimeoutMS) * time.Millisecond,
				MaxOutput: int(o.MaxOutput),
			}
			seen := map[string]bool{}
			for _, name := range append(append([]string{}, baseVars...), o.Env...) {
				if seen[name] {
					continue
				}
				seen[name] = true
				if v, ok := getenv(name); ok {
					cfg.Env = append(cfg.Env, name+"="+v)
				}
			}
			return sdk.Instance{State: cfg}, nil
		},
	}
}
