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
	// SHA256, when set, pins the executable at Path: before every start it is opened, hashed
	// through that descriptor and compared, and that same descriptor is what executes (on
	// Linux), so a file changed after install, or swapped in while the host starts it, never
	// runs. A pinned command cannot have a Wrap.
	SHA256 []byte
	// Wrap, when not nil, rewrites the command after the environment is built and the pin is
	// checked, just before the process starts: it may replace cmd.Path and cmd.Args with a
	// wrapper that ends by executing the original command line (sandbox.WrapCommand's
	// `halo __sandbox`, say), and add cmd.ExtraFiles or variables to cmd.Env. It must not
	// replace cmd.SysProcAttr, cmd.Stdin, cmd.Stdout or cmd.Stderr. A Sandbox must then
	// grant the wrapper too.
	Wrap func(cmd *exec.Cmd) error
	// Sandbox, when not nil, confines the plugin from its first instruction. The host calls
	// it on an OS thread of its own, locked for the purpose, and starts the plugin from that
	// thread, which it must have restricted (sandbox.ConfineThread: no_new_privs, no
	// capabilities, Landlock); the plugin inherits the restrictions and can never lift
	// them. env is the plugin's whole environment (its socket folder is named there). The
	// thread is kept, and used for nothing else, until the plugin exits.
	//
	// Without a Sandbox, a host that holds capabilities (root) still starts the plugin from
	// a thread of its own, one whose programs get none: see isolation_linux.go.
	Sandbox func(env []string) error
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
