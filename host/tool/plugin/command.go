package plugin

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// A Command says how to start one plugin executable. The zero values are safe: no extra
// variables, no wrapper, no pin.
type Command struct {
	// Name names the plugin in logs and errors: the provider name, or the package name for a
	// package that serves several providers. The plugin's log lines appear under it.
	Name string
	// Path is the executable: the halo binary itself for built-ins, a package's file for
	// module packages. Args are its arguments after argv[0].
	Path string
	Args []string
	// Dir is the working folder of the plugin; "" means the host's.
	Dir string
	// Env names the variables the plugin may see besides PATH and HOME: each is copied from
	// Getenv when set there. Nothing else from the host's environment reaches the plugin.
	Env []string
	// SetEnv sets variables to fixed values (a sandbox wrapper's settings, say). They win
	// over Env.
	SetEnv map[string]string
	// Getenv reads the environment the CLI handed in; nil means no variable is set (not even
	// PATH or HOME).
	Getenv func(string) (string, bool)
	// SHA256, when set, pins the executable at Path: it is hashed and compared before every
	// start (go-plugin's SecureConfig), so a file changed after install never runs.
	SHA256 []byte
	// Wrap, when not nil, rewrites the command after the environment is built and the pin is
	// checked, just before the process starts: the sandbox step replaces cmd.Path and
	// cmd.Args with a wrapper that applies restrictions and then execs the original command
	// line, and may add cmd.ExtraFiles or variables to cmd.Env. It must not replace
	// cmd.SysProcAttr, cmd.Stdin, cmd.Stdout or cmd.Stderr.
	Wrap func(cmd *exec.Cmd) error
}

// environ builds the plugin's whole environment: PATH, HOME, the allowed names, SetEnv.
func (c Command) environ() []string {
	vals := map[string]string{}
	if c.Getenv != nil {
		// PATH and HOME are what every plugin gets when the host has them.
		for _, name := range append([]string{"PATH", "HOME"}, c.Env...) {
			if v, ok := c.Getenv(name); ok {
				vals[name] = v
			}
		}
	}
	for k, v := range c.SetEnv {
		vals[k] = v
	}
	out := make([]string, 0, len(vals))
	for k, v := range vals {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func (c Command) check() error {
	if c.Path == "" {
		return fmt.Errorf("plugin %s: no executable", c.Name)
	}
	for _, name := range c.Env {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return fmt.Errorf("plugin %s: bad variable name %q", c.Name, name)
		}
	}
	if _, err := os.Stat(c.Path); err != nil {
		return fmt.Errorf("plugin %s: %w", c.Name, err)
	}
	return nil
}
