// Package builtin owns the providers that ship with the halo binary and run code: Workspace
// and Bash. It registers them as tool.Types, with their methods known without starting
// anything (for `halo tools` and validation), and opens each declaration as its own plugin
// process: the halo binary re-executed (`halo __plugin workspace|bash`) with a clean
// environment and, on Linux, confined from its first instruction (plugin.Command.Sandbox):
// a Landlock ruleset that grants exactly the declaration's folders, no capabilities, and
// no_new_privs.
//
// The host confines one thread of its own and starts the plugin from it, so the halo binary
// starts once per plugin. (It used to start twice: once as the `halo __sandbox` wrapper,
// which confined itself and executed the plugin. The plugin cannot confine itself in place:
// Landlock before ABI 8 restricts one thread at a time, and threads restricted one by one
// get sibling domains, which Landlock's signal scoping keeps from signalling each other's
// children.)
//
// Main is the other half: what the hidden `__plugin` command runs inside the plugin.
package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/plugin"
	"halolang.dev/halo/host/tool/pool"
	"halolang.dev/halo/host/tool/sandbox"
	"halolang.dev/halo/plugins/bash"
	"halolang.dev/halo/plugins/workspace"
	"halolang.dev/halo/sdk"
)

// PluginCommand is the hidden subcommand of halo that serves a built-in plugin.
const PluginCommand = "__plugin"

// Config is what opening built-in providers needs from the command that builds the registry.
type Config struct {
	// Executable is the halo binary, re-executed to serve each plugin.
	Executable string
	// Getenv reads the environment the CLI handed in; plugins see only PATH, HOME and what
	// a declaration names.
	Getenv func(string) (string, bool)
	// Logger receives the plugins' log lines (under the provider's name) and the sandbox
	// warning.
	Logger hclog.Logger
	// Sandbox decides whether plugins start confined. Nil means: on Linux, always (even
	// without Landlock they start without capabilities); elsewhere never.
	Sandbox *bool
	// Status is what the kernel can enforce; zero means sandbox.Detect() is asked.
	Status *sandbox.Status
	// Pool, when not nil, keeps each declaration's plugin process for later runs of a
	// declaration with the same resolved configuration (halo serve, halo mcp); nil gives each
	// opened provider a process of its own, stopped when it is closed.
	Pool *pool.Pool

	// userNamespace starts sandboxed plugins in a user namespace even when the host is root
	// (plugin.Options.UserNamespace): the tests use it to run the path of a host that is
	// not root.
	userNamespace bool
}

// Builtins opens Workspace and Bash declarations.
type Builtins struct {
	cfg      Config
	status   sandbox.Status
	warnOnce sync.Once
	// The providers' methods, derived once (schemas come from Go types by reflection), and
	// those a read-only and a writable Workspace offer.
	workspace, bash []tool.Method
	workspaceOffers [2][]tool.Method
	// system is what every Bash plugin reads (systemReadOnly), listed once per process.
	systemOnce sync.Once
	system     []string
	// protects keeps the policies made from the project's entries (protectCache).
	protects protectCache
	// parsed keeps what declarations' arguments parse to (parseCache).
	parsed parseCache
}

// New prepares the built-in types.
func New(cfg Config) *Builtins {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) (string, bool) { return "", false }
	}
	b := &Builtins{cfg: cfg, workspace: Methods(workspace.Provider()), bash: bashMethods(bash.Provider(nil))}
	for i, write := range []bool{false, true} {
		for _, m := range b.workspace {
			if workspace.Offers(write, m.Name) {
				b.workspaceOffers[i] = append(b.workspaceOffers[i], m)
			}
		}
	}
	if cfg.Status != nil {
		b.status = *cfg.Status
	} else {
		b.status = sandbox.Detect()
	}
	return b
}

// Register adds Workspace and Bash to r.
func Register(r *tool.Registry, cfg Config) error {
	b := New(cfg)
	for _, t := range b.Types() {
		if err := r.Add(t); err != nil {
			return err
		}
	}
	return nil
}

// SandboxStatus says what the sandbox around these plugins enforces on this system.
func (b *Builtins) SandboxStatus() sandbox.Status { return b.status }

// Types returns the Workspace and Bash types.
func (b *Builtins) Types() []tool.Type {
	ws := workspace.Provider()
	bs := bash.Provider(nil)
	return []tool.Type{
		{
			Name:        workspace.Name,
			Description: ws.Description,
			Kind:        tool.KindBuiltin,
			Methods:     b.workspace,
			MethodsOf:   workspaceMethods(b.workspace, &b.workspaceOffers),
			Open:        b.openWorkspace,
		},
		{
			Name:        bash.Name,
			Description: bs.Description,
			Kind:        tool.KindBuiltin,
			Methods:     b.bash,
			Open:        b.openBash,
		},
	}
}

// bashMethods are Bash's methods, with run's command marked as the shell command line it is.
func bashMethods(bs sdk.Provider) []tool.Method {
	ms := Methods(bs)
	for i := range ms {
		if ms[i].Name == bash.RunMethod {
			ms[i].Shell = bash.CommandArg
		}
	}
	return ms
}

// workspaceMethods says which of all a Workspace declaration offers: without write: true,
// the reading ones (offers[0]), as the plugin does when it opens (workspace.Offers), else
// all of them (offers[1]); the lists are worked out once, in New. A write: whose value is not
// known before the run (or is not a boolean, which opening refuses) decides nothing.
func workspaceMethods(all []tool.Method, offers *[2][]tool.Method) func(d tool.Declaration) []tool.Method {
	return func(d tool.Declaration) []tool.Method {
		v, given := d.Named["write"]
		if !given {
			return offers[0]
		}
		write, isBool := v.(bool)
		switch {
		case !isBool:
			return all
		case write:
			return offers[1]
		}
		return offers[0]
	}
}

// Methods converts an SDK provider's methods to the host's descriptions.
func Methods(p sdk.Provider) []tool.Method {
	out := make([]tool.Method, 0, len(p.Methods))
	for _, m := range p.Methods {
		out = append(out, tool.Method{
			Name:         m.Name,
			Description:  m.Description,
			Params:       m.Schema,
			Effect:       tool.Effect(m.Effect),
			PipelineOnly: m.PipelineOnly,
		})
	}
	return out
}

func sdkDeclaration(d tool.Declaration) sdk.Declaration {
	named := d.Named
	if named == nil {
		named = map[string]any{}
	}
	dir := d.Dir
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return sdk.Declaration{Tool: d.Name, Provider: d.Provider, Args: d.Args, Named: named, ProjectDir: dir}
}

// WorkspacePolicy is what a Workspace declaration's plugin may reach: its root, read-only
// unless write: true, and no network.
func WorkspacePolicy(o workspace.Options) sandbox.Policy {
	if o.Write {
		return sandbox.Policy{ReadWrite: []string{o.Root}}
	}
	return sandbox.Policy{ReadOnly: []string{o.Root}}
}

// BashPolicy is what a Bash declaration's plugin may reach: the system folders read-only
// (/etc without its secrets, /proc without any process's entries), its cwd and its own
// temporary folder read-write, the declaration's read: and write: folders, and the network
// unless network: false.
func BashPolicy(o bash.Options, tmp string) sandbox.Policy {
	return bashPolicy(o, tmp, systemReadOnly())
}

// systemReadOnly is what BashPolicy grants every Bash plugin to read.
func systemReadOnly() []string {
	ro := append(append([]string{}, sandbox.ShellReadOnly...), sandbox.EtcReadOnly("/etc")...)
	ro = append(ro, sandbox.ProcReadOnly("/proc")...)
	return append(ro, sandbox.SystemReadOnly...)
}

// bashPolicy is BashPolicy with the system's folders listed already (system).
func bashPolicy(o bash.Options, tmp string, system []string) sandbox.Policy {
	p := sandbox.Policy{Network: o.NetworkAllowed()}
	p.ReadOnly = append(append([]string{}, system...), o.Read...)
	p.ReadWrite = append([]string{o.Cwd}, o.Write...)
	if tmp != "" {
		p.ReadWrite = append(p.ReadWrite, tmp)
	}
	return p
}

// systemReadOnly is systemReadOnly, listed (/etc's and /proc's entries) once for every Bash
// declaration these builtins open: opening one is then no listing of /proc's hundreds of
// entries.
func (b *Builtins) systemReadOnly() []string {
	b.systemOnce.Do(func() { b.system = systemReadOnly() })
	return b.system
}

func (b *Builtins) openWorkspace(ctx context.Context, d tool.Declaration) (tool.Provider, error) {
	sd := sdkDeclaration(d)
	// Read once, as the declaration wrote it; its folder is then made absolute as
	// ParseOptions does with the project folder.
	declared, err := parse(&b.parsed, d, func() (workspace.Options, error) { return workspace.ParseOptions(asDeclared(sd)) })
	if err != nil {
		return nil, tool.Errorf(tool.CodeToolConfig, "%v", err)
	}
	proj, err := batchProject(d.Batch, sd.ProjectDir)
	if err != nil {
		return nil, err
	}
	o := declared
	o.Root = inProject(declared.Root, sd.ProjectDir)
	if o.Root, err = grantedFolder("Workspace root", declared.Root, o.Root, sd.ProjectDir, proj); err != nil {
		return nil, err
	}
	if err := isDir("Workspace root", o.Root); err != nil {
		if !o.Write {
			return nil, err
		}
		// The sandbox can only grant a folder that exists.
		if err := os.MkdirAll(o.Root, 0o755); err != nil {
			return nil, tool.Errorf(tool.CodeToolConfig, "Workspace root %s: %v", o.Root, err)
		}
		if err := isDir("Workspace root", o.Root); err != nil {
			return nil, err
		}
	}
	// The plugin works on the folder the sandbox grants.
	named := map[string]any{"root": o.Root}
	if o.Write {
		named["write"] = true
	}
	pol, polDigest, err := b.protects.protect("workspace\x00"+o.Root+"\x00"+strconv.FormatBool(o.Write), func() sandbox.Policy { return WorkspacePolicy(o) }, proj)
	if err != nil {
		return nil, err
	}
	offered := b.workspaceOffers[0]
	if o.Write {
		offered = b.workspaceOffers[1]
	}
	return b.open(launch{decl: resolved(d, named), which: "workspace", policy: func(string) (sandbox.Policy, string, error) { return pol, polDigest, nil },
		methods: offered, callTimeout: plugin.DefaultCallTimeout})
}

func (b *Builtins) openBash(ctx context.Context, d tool.Declaration) (tool.Provider, error) {
	sd := sdkDeclaration(d)
	declared, err := parse(&b.parsed, d, func() (bash.Options, error) { return bash.ParseOptions(asDeclared(sd)) })
	if err != nil {
		return nil, tool.Errorf(tool.CodeToolConfig, "%v", err)
	}
	o := declared
	o.Cwd = inProject(declared.Cwd, sd.ProjectDir)
	o.Read, o.Write = make([]string, len(declared.Read)), make([]string, len(declared.Write))
	for i, p := range declared.Read {
		o.Read[i] = inProject(p, sd.ProjectDir)
	}
	for i, p := range declared.Write {
		o.Write[i] = inProject(p, sd.ProjectDir)
	}
	project, err := batchProject(d.Batch, sd.ProjectDir)
	if err != nil {
		return nil, err
	}
	if o.Cwd, err = grantedFolder("Bash cwd", declared.Cwd, o.Cwd, sd.ProjectDir, project); err != nil {
		return nil, err
	}
	if err := isDir("Bash cwd", o.Cwd); err != nil {
		return nil, err
	}
	for _, list := range []struct {
		what     string
		declared []string
		resolved []string
	}{{"Bash read: folder", declared.Read, o.Read}, {"Bash write: folder", declared.Write, o.Write}} {
		for i := range list.resolved {
			if list.resolved[i], err = grantedFolder(list.what, list.declared[i], list.resolved[i], sd.ProjectDir, project); err != nil {
				return nil, err
			}
			if err := isDir(list.what, list.resolved[i]); err != nil {
				return nil, err
			}
		}
	}
	// The plugin works in the folders the sandbox grants.
	named := map[string]any{"cwd": o.Cwd, "read": anyList(o.Read), "write": anyList(o.Write)}
	// A command has its own time limit, which the plugin enforces; the host gives the call a
	// little more, for a plugin that stopped answering.
	limit := bash.DefaultTimeout
	if o.TimeoutMS > 0 {
		limit = time.Duration(o.TimeoutMS * float64(time.Millisecond))
	}
	return b.open(launch{decl: resolved(d, named), which: "bash", env: o.Env, tmp: true,
		policy: func(tmp string) (sandbox.Policy, string, error) {
			key := fmt.Sprintf("bash\x00%s\x00%q\x00%q\x00%t\x00%s", o.Cwd, o.Read, o.Write, o.NetworkAllowed(), tmp)
			return b.protects.protect(key, func() sandbox.Policy { return bashPolicy(o, tmp, b.systemReadOnly()) }, project)
		},
		methods: b.bash, callTimeout: limit + bashCallMargin})
}

// inProject is path p made absolute against the project folder, as the providers'
// ParseOptions make it.
func inProject(p, project string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(project, p)
}

// asDeclared is d without its project folder: parsed, its paths read as the declaration
// wrote them (relative ones stay relative).
func asDeclared(d sdk.Declaration) sdk.Declaration {
	d.ProjectDir = ""
	return d
}

// resolved returns d with the named arguments in set, in place of its positional one
// (Workspace's root, Bash's cwd, which set names).
func resolved(d tool.Declaration, set map[string]any) tool.Declaration {
	named := map[string]any{}
	for k, v := range d.Named {
		named[k] = v
	}
	for k, v := range set {
		named[k] = v
	}
	d.Args, d.Named = nil, named
	return d
}

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func isDir(what, p string) error {
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return tool.Errorf(tool.CodeToolConfig, "%s %s does not exist", what, p)
	}
	if err != nil {
		return tool.Errorf(tool.CodeToolConfig, "%s %s: %v", what, p, err)
	}
	if !st.IsDir() {
		return tool.Errorf(tool.CodeToolConfig, "%s %s is not a folder", what, p)
	}
	return nil
}

// Sandboxed reports whether plugins start confined (on Linux, unless the configuration
// turned it off).
func (b *Builtins) Sandboxed() bool { return b.sandboxed() }

func (b *Builtins) sandboxed() bool {
	if b.cfg.Sandbox != nil {
		return *b.cfg.Sandbox
	}
	return runtime.GOOS == "linux"
}

// bashCallMargin is how much longer than its command's own time limit the host waits for a
// Bash call.
const bashCallMargin = 10 * time.Second

// A launch is how one declaration's plugin is started: everything that decides what its
// process may do, which is also what its pool key is made of.
type launch struct {
	decl  tool.Declaration // resolved: the folders the sandbox grants
	which string           // "workspace" or "bash"
	env   []string         // the variables the plugin sees besides PATH and HOME
	// tmp gives each process a temporary folder of its own (TMPDIR), granted read-write and
	// removed with it: the shared /tmp stays out of the sandbox.
	tmp bool
	// policy is the sandbox policy of a process with temporary folder tmp ("" without one),
	// and a digest of it.
	policy      func(tmp string) (sandbox.Policy, string, error)
	methods     []tool.Method // what the declaration offers, known without starting anything
	callTimeout time.Duration
}

// key identifies the plugin a launch starts: equal keys start the same program with the same
// arguments, grants and environment, for the same declared tool.
func (b *Builtins) key(l launch) (string, error) {
	_, pol, err := l.policy("")
	if err != nil {
		return "", err
	}
	k := pool.NewKeyer(l.which).String(b.cfg.Executable).String(l.decl.Name).String(l.decl.Provider).Value(l.decl.Named).String(l.decl.Dir)
	k.Env([]string{"PATH", "HOME"}, b.cfg.Getenv).Env(l.env, b.cfg.Getenv)
	key, err := k.String(pol).Bool(b.sandboxed()).Bool(b.cfg.userNamespace).Duration(l.callTimeout).Key()
	if err != nil {
		return "", tool.Errorf(tool.CodeToolConfig, "tool %s: %v", l.decl.Name, err)
	}
	return key, nil
}

// open leases the declaration's plugin: a process with exactly the declaration's grants,
// started on the first call (its methods are known without it), kept by Config.Pool for a
// later run of a declaration with the same key, or stopped when the provider is closed.
func (b *Builtins) open(l launch) (tool.Provider, error) {
	if b.cfg.Executable == "" {
		return nil, errors.New("built-in plugins need the path of the halo executable")
	}
	key, err := b.key(l)
	if err != nil {
		return nil, err
	}
	return b.cfg.Pool.Lease(pool.Spec{
		Key: key, Name: l.decl.Provider,
		New: func() (pool.Resource, error) { return b.process(l) },
		Provider: func(r pool.Resource) (tool.Provider, error) {
			pr := r.(*process)
			p, err := pr.client.Declare(l.decl)
			if err != nil {
				return nil, err
			}
			return &owned{Provider: p, proc: pr, methods: l.methods}, nil
		},
		Reusable: func(r pool.Resource) bool { return r.(*process).reusable() },
		Batch:    l.decl.Batch,
	})
}

// process makes the plugin client of a launch; nothing starts until its first call.
func (b *Builtins) process(l launch) (*process, error) {
	pr := &process{}
	if l.tmp {
		tmp, err := os.MkdirTemp("", "halo-"+l.which+"-")
		if err == nil {
			// Granted with its links resolved, as every folder is (sandbox.Resolve).
			var real string
			if real, err = filepath.EvalSymlinks(tmp); err == nil {
				tmp = real
			} else {
				os.RemoveAll(tmp)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: temporary folder: %w", l.decl.Provider, err)
		}
		pr.tmp = tmp
	}
	cmd := plugin.Command{
		Name:   l.decl.Provider,
		Path:   b.cfg.Executable,
		Args:   []string{PluginCommand, l.which},
		Env:    l.env,
		Getenv: b.cfg.Getenv,
	}
	if pr.tmp != "" {
		cmd.SetEnv = map[string]string{"TMPDIR": pr.tmp}
	}
	if b.sandboxed() {
		b.warnOnce.Do(func() {
			if !b.status.Enforced() {
				b.cfg.Logger.Warn(b.status.String())
			}
		})
		pol, _, err := l.policy(pr.tmp)
		if err != nil {
			if pr.tmp != "" {
				os.RemoveAll(pr.tmp)
			}
			return nil, err
		}
		exe := b.cfg.Executable
		cmd.Sandbox = func(env []string) error { return sandbox.ConfineThread(pol, exe, env) }
	}
	pr.client = plugin.New(cmd, plugin.Options{Logger: b.cfg.Logger, UserNamespace: b.cfg.userNamespace, CallTimeout: l.callTimeout})
	return pr, nil
}

// A process is one built-in plugin process (started on first use) and its temporary folder.
type process struct {
	client *plugin.Client
	tmp    string
}

// reusable reports whether the process may serve another run: its provider did not ask for a
// process per run, it left no process running (plugin.Client.Alone), and its temporary folder
// could be emptied. Nothing one run left there is seen by the next.
func (p *process) reusable() bool {
	if !p.client.Ran() {
		return true // nothing ran: nothing was left
	}
	if p.client.PerRun() || !p.client.Alone() {
		return false
	}
	if p.tmp == "" {
		return true
	}
	entries, err := os.ReadDir(p.tmp)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(p.tmp, e.Name())); err != nil {
			return false
		}
	}
	return true
}

// Close stops the plugin and removes its temporary folder.
func (p *process) Close() error {
	err := p.client.Close()
	if p.tmp != "" {
		os.RemoveAll(p.tmp)
	}
	return err
}

// owned is one run's provider of a declaration: its instance on the plugin process, and the
// methods the declaration offers, which need no process.
type owned struct {
	tool.Provider
	proc    *process
	methods []tool.Method
}

// Methods returns what the declaration offers without starting the plugin.
func (o *owned) Methods(context.Context) ([]tool.Method, error) {
	return append([]tool.Method(nil), o.methods...), nil
}

// PID returns the plugin's process id, 0 when none runs. Tests use it.
func (o *owned) PID() int { return o.proc.client.PID() }

// Main runs the hidden `halo __plugin NAME`: it serves the built-in plugin NAME
// ("workspace" or "bash") to the host that started this process, returning when the host
// stops it. getenv reads this process's environment, which the host already limited.
func Main(args []string, getenv func(string) (string, bool)) error {
	if len(args) != 1 {
		return errors.New("usage: halo __plugin workspace|bash")
	}
	switch args[0] {
	case "workspace":
		sdk.Serve(workspace.Provider())
	case "bash":
		sdk.Serve(bash.Provider(getenv))
	default:
		return fmt.Errorf("no built-in plugin %q (have bash, workspace)", args[0])
	}
	return nil
}
