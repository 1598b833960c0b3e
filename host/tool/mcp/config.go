package mcp

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/host/tool"
)

// DefaultTimeout is how long one request may take when a declaration sets no timeout_ms:.
const DefaultTimeout = 60 * time.Second

// A Config says how to reach one MCP server: exactly one of Command (a stdio server) or URL
// (Streamable HTTP). FromDeclaration builds one from an `MCP(...)` declaration and
// PackageConfig from an mcp package's manifest; tests build them directly.
type Config struct {
	// Name is the declared tool name, for messages and logs.
	Name string
	// Command is the argv of a stdio server. Command[0] is looked up in Env's PATH (never the
	// host's own PATH) unless it holds a '/'.
	Command []string
	// Env is the stdio server's whole environment: nothing else from the host reaches it.
	// FromDeclaration fills it with PATH, HOME and what env: gives.
	Env map[string]string
	// Dir is the stdio server's working folder; empty means the host's.
	Dir string
	// URL is a Streamable HTTP endpoint.
	URL string
	// APIKey, when set, is sent as "Authorization: Bearer <APIKey>" (HTTP only).
	APIKey string
	// Headers are extra HTTP headers (HTTP only).
	Headers map[string]string
	// Timeout bounds each request, the start-up handshake included. Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxResultBytes bounds every message the server sends: a stdio line, an HTTP response
	// body. Zero means tool.DefaultMaxResultBytes.
	MaxResultBytes int
	// Logger receives the server's stderr and connection events. Nil discards them.
	Logger hclog.Logger
	// HTTPClient, when not nil, carries HTTP requests (tests hand in httptest's client).
	HTTPClient *http.Client
	// Sandbox, when not nil, confines a stdio server (confine.go).
	Sandbox *Confinement
}

// A Problem is one thing wrong with a declaration's options. halo validate prints each one
// at the declaration with code TOOL_CONFIG.
type Problem = tool.Problem

// options every MCP declaration may name, and which transport each belongs to.
var optionTransport = map[string]string{
	"url":        "http",
	"apiKey":     "http",
	"headers":    "http",
	"env":        "stdio",
	"cwd":        "stdio",
	"timeout_ms": "",
	// tool.MaxResultOption
	"max_result_bytes": "",
	// confine.go
	"sandbox": "stdio",
	"paths":   "stdio",
	"hosts":   "stdio",
	"write":   "stdio",
}

// envName is what a variable name listed in env: must look like.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckDeclaration returns every problem with an `MCP(...)` declaration's arguments, without
// starting anything. halo validate calls it before values from the environment are known:
// a nil value stands for "known only at run time" and is not type-checked.
func CheckDeclaration(d tool.Declaration) []Problem {
	var ps []Problem
	add := func(opt, format string, args ...any) {
		ps = append(ps, Problem{Option: opt, Message: fmt.Sprintf(format, args...)})
	}
	if len(d.Args) > 1 {
		add("command", "MCP takes one positional argument (the server command or an https:// URL), got %d", len(d.Args))
	}
	transport := ""
	first, hasFirst := d.Args, len(d.Args) > 0
	if hasFirst && first[0] != nil {
		s, ok := first[0].(string)
		switch {
		case !ok:
			add("command", "the first argument must be a string: a command such as \"npx -y @modelcontextprotocol/server-github\" or an https:// URL")
		case isURL(s):
			transport = "http"
			if err := checkURL(s); err != nil {
				add("url", "%v", err)
			}
		default:
			transport = "stdio"
			if _, err := SplitCommand(s); err != nil {
				add("command", "%v", err)
			}
		}
	}
	if v, ok := d.Named["url"]; ok {
		if hasFirst {
			add("url", "give either a command or url:, not both")
		}
		transport = "http"
		if v != nil {
			if s, ok := v.(string); !ok {
				add("url", "must be a string")
			} else if err := checkURL(s); err != nil {
				add("url", "%v", err)
			}
		}
	}
	if !hasFirst && !hasKey(d.Named, "url") {
		add("command", "MCP needs a server: a command to run over stdio (MCP(\"npx -y some-server\")) or url: for Streamable HTTP")
	}
	names := make([]string, 0, len(d.Named))
	for k := range d.Named {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := d.Named[k]
		want, known := optionTransport[k]
		if !known {
			add(k, "unknown option; MCP takes url:, apiKey:, headers:, env:, cwd:, timeout_ms:, max_result_bytes:, sandbox:, paths:, write: and hosts:")
			continue
		}
		if want != "" && transport != "" && want != transport {
			if want == "http" {
				add(k, "applies to HTTP servers only (url:), not to a stdio command")
			} else {
				add(k, "applies to stdio servers only (a command), not to url:")
			}
		}
		if v == nil {
			continue
		}
		switch k {
		case "apiKey", "cwd":
			if _, ok := v.(string); !ok {
				add(k, "must be a string")
			}
		case "headers":
			if err := checkStringRecord(v); err != nil {
				add(k, "must be a record of strings, such as { \"X-Org\": \"acme\" }: %v", err)
			}
		case "env":
			if err := checkEnv(v); err != nil {
				add(k, "%v", err)
			}
		case "timeout_ms":
			if _, err := timeoutOf(v); err != nil {
				add(k, "%v", err)
			}
		case tool.MaxResultOption:
			if _, err := tool.MaxResultBytesOf(d.Named); err != nil {
				add(k, "must be a positive whole number of bytes, such as 67108864 for 64 MiB")
			}
		case "sandbox", "paths", "hosts", "write":
			if msg := checkConfinement(k, v); msg != "" {
				add(k, "%s", msg)
			}
		}
	}
	return ps
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

func isURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

// checkURL accepts https:// anywhere and http:// only on this machine: an API key must not
// cross a network in clear text.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URL: %v", err)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("%s: use https://; http:// is allowed only for localhost", s)
		}
	default:
		return fmt.Errorf("%s: want an https:// URL", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%s: the URL has no host", s)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func checkEnv(v any) error {
	switch e := v.(type) {
	case []any:
		for _, n := range e {
			s, ok := n.(string)
			if !ok {
				return fmt.Errorf("a list of variable names must hold strings, got %T", n)
			}
			if !envName.MatchString(s) {
				return fmt.Errorf("%q is not a variable name", s)
			}
		}
		return nil
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(e)) { // the same first problem every time
			val := e[k]
			if !envName.MatchString(k) {
				return fmt.Errorf("%q is not a variable name", k)
			}
			if _, err := scalarString(val); err != nil {
				return fmt.Errorf("%s: %v", k, err)
			}
		}
		return nil
	}
	return fmt.Errorf("must be a list of variable names (env: [\"GITHUB_TOKEN\"]) or a record of values (env: { LOG_LEVEL: \"warn\" })")
}

func scalarString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case float64:
		return fmt.Sprint(x), nil
	case bool:
		return fmt.Sprint(x), nil
	}
	return "", fmt.Errorf("want a string, got %T", v)
}

// checkStringRecord returns stringRecord's error for v, without the record: the checker
// reads every declaration's headers, and sorting the keys to build a map it then drops made
// five allocations a declaration. The key it names is the first in sorted order that is not
// a string, as stringRecord's.
func checkStringRecord(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("got %T", v)
	}
	bad, found := "", false
	for k, val := range m {
		if _, ok := val.(string); !ok && (!found || k < bad) {
			bad, found = k, true
		}
	}
	if found {
		return fmt.Errorf("%s is %T, not a string", bad, m[bad])
	}
	return nil
}

func stringRecord(v any) (map[string]string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("got %T", v)
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) { // the same first problem every time
		val := m[k]
		s, ok := val.(string)
		if !ok {
			return nil, fmt.Errorf("%s is %T, not a string", k, val)
		}
		out[k] = s
	}
	return out, nil
}

func timeoutOf(v any) (time.Duration, error) {
	f, ok := v.(float64)
	if !ok {
		return 0, fmt.Errorf("must be a number of milliseconds")
	}
	if f <= 0 || f != float64(int64(f)) {
		return 0, fmt.Errorf("must be a positive whole number of milliseconds, got %v", f)
	}
	return time.Duration(f) * time.Millisecond, nil
}

func problemsError(name string, ps []Problem) error {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.String()
	}
	return tool.Errorf(tool.CodeToolConfig, "MCP tool %s: %s", name, strings.Join(msgs, "; "))
}

// FromDeclaration builds the Config of an `MCP(...)` declaration: the first argument is a
// command or an http(s) URL; url:, apiKey:, headers:, env:, cwd:, timeout_ms: and
// max_result_bytes: are the options. env: names are read through d.Getenv, as are PATH and HOME, so the server sees
// the environment the CLI handed in, never the host process's own. A problem is a
// TOOL_CONFIG error.
func FromDeclaration(d tool.Declaration) (Config, error) {
	if ps := CheckDeclaration(d); len(ps) > 0 {
		return Config{}, problemsError(d.Name, ps)
	}
	cfg, err := commonOptions(d)
	if err != nil {
		return Config{}, err
	}
	target, _ := d.Arg(0).(string)
	if u, ok := d.Named["url"].(string); ok {
		target = u
	}
	switch {
	case target == "":
		return Config{}, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: the server command or url: is empty", d.Name)
	case isURL(target):
		cfg.URL = target
	default:
		argv, err := SplitCommand(target)
		if err != nil {
			return Config{}, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: %v", d.Name, err)
		}
		cfg.Command = argv
		cfg.Env = baseEnv(d.Getenv)
		if err := addEnv(cfg.Env, d.Named["env"], d.Getenv); err != nil {
			return Config{}, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: env: %v", d.Name, err)
		}
	}
	return cfg, nil
}

// A Package is what an mcp package's manifest fixes about its server: exactly one of a
// command or a URL, and the names of the variables a stdio server may see.
type Package struct {
	// Command starts a stdio server; it is split like a declaration's first argument.
	Command string
	// URL is a Streamable HTTP endpoint (https://, or http:// on localhost).
	URL string
	// Env names the variables the stdio server may see, read through the declaration's Getenv.
	Env []string
}

// PackageConfig builds the Config of a declaration of an mcp package's provider. The
// manifest fixes the command or URL and the environment; the declaration may add apiKey:,
// headers:, cwd:, timeout_ms:, max_result_bytes:, sandbox:, paths: and hosts:, but cannot
// point the provider at another command, URL or environment.
func PackageConfig(pkg Package, d tool.Declaration) (Config, error) {
	var ps []Problem
	if len(d.Args) > 0 {
		ps = append(ps, Problem{Option: "command", Message: "this provider's server is fixed by its package; a declaration cannot give a command or URL"})
	}
	for _, k := range []string{"url", "env"} {
		if hasKey(d.Named, k) {
			ps = append(ps, Problem{Option: k, Message: "this provider's server and environment are fixed by its package; remove " + k + ":"})
		}
	}
	if (pkg.Command == "") == (pkg.URL == "") {
		ps = append(ps, Problem{Option: "command", Message: "the package manifest must give exactly one of command and url"})
	}
	// Check the options the declaration may set as if it named the package's server itself.
	probe := tool.Declaration{Name: d.Name, Named: map[string]any{}}
	for k, v := range d.Named {
		if k != "url" && k != "env" {
			probe.Named[k] = v
		}
	}
	if pkg.URL != "" {
		probe.Args = []any{pkg.URL}
	} else {
		probe.Args = []any{pkg.Command}
	}
	ps = append(ps, CheckDeclaration(probe)...)
	for _, n := range pkg.Env {
		if !envName.MatchString(n) {
			ps = append(ps, Problem{Option: "env", Message: fmt.Sprintf("the package lists %q, which is not a variable name", n)})
		}
	}
	if len(ps) > 0 {
		return Config{}, problemsError(d.Name, ps)
	}
	cfg, err := commonOptions(d)
	if err != nil {
		return Config{}, err
	}
	if pkg.URL != "" {
		cfg.URL = pkg.URL
		return cfg, nil
	}
	argv, err := SplitCommand(pkg.Command)
	if err != nil {
		return Config{}, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: package command: %v", d.Name, err)
	}
	cfg.Command = argv
	cfg.Env = baseEnv(d.Getenv)
	names := make([]any, len(pkg.Env))
	for i, n := range pkg.Env {
		names[i] = n
	}
	if err := addEnv(cfg.Env, names, d.Getenv); err != nil {
		return Config{}, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: env: %v", d.Name, err)
	}
	return cfg, nil
}

// commonOptions reads the options a package declaration may set too.
func commonOptions(d tool.Declaration) (Config, error) {
	cfg := Config{Name: d.Name, Timeout: DefaultTimeout, Dir: d.Dir}
	if s, ok := d.Named["apiKey"].(string); ok {
		cfg.APIKey = s
	}
	if v, ok := d.Named["headers"]; ok && v != nil {
		h, err := stringRecord(v)
		if err != nil {
			return Config{}, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: headers: %v", d.Name, err)
		}
		cfg.Headers = h
	}
	if s, ok := d.Named["cwd"].(string); ok && s != "" {
		if !filepath.IsAbs(s) && d.Dir != "" {
			s = filepath.Join(d.Dir, s)
		}
		cfg.Dir = s
	}
	if v, ok := d.Named["timeout_ms"]; ok && v != nil {
		t, err := timeoutOf(v)
		if err != nil {
			return Config{}, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: timeout_ms: %v", d.Name, err)
		}
		cfg.Timeout = t
	}
	n, err := tool.MaxResultBytesOf(d.Named)
	if err != nil {
		return Config{}, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: %v", d.Name, err)
	}
	cfg.MaxResultBytes = n
	return cfg, nil
}

// baseEnv is what every stdio server gets: PATH and HOME from the environment the CLI
// handed in, so that commands like npx work, and nothing else.
func baseEnv(getenv func(string) (string, bool)) map[string]string {
	env := map[string]string{}
	if getenv == nil {
		return env
	}
	for _, k := range []string{"PATH", "HOME"} {
		if v, ok := getenv(k); ok {
			env[k] = v
		}
	}
	return env
}

// addEnv adds env:'s variables: a list of names read through getenv (a name that is not
// set is left out, as the server would see it on a shell), or a record of values.
func addEnv(env map[string]string, v any, getenv func(string) (string, bool)) error {
	switch e := v.(type) {
	case nil:
	case []any:
		for _, n := range e {
			name, _ := n.(string)
			if getenv == nil {
				continue
			}
			if val, ok := getenv(name); ok {
				env[name] = val
			}
		}
	case map[string]any:
		for k, val := range e {
			s, err := scalarString(val)
			if err != nil {
				return fmt.Errorf("%s: %v", k, err)
			}
			env[k] = s
		}
	default:
		return fmt.Errorf("want a list of names or a record of values, got %T", v)
	}
	return nil
}

// SplitCommand splits a server command into its arguments, the way a declaration writes it:
// words are separated by spaces or tabs, '...' and "..." quote (a quote of the other kind
// inside is literal), and a backslash before a quote or a backslash inside "..." escapes it.
// Nothing else is interpreted: no variables, globs or pipes, since the command runs without
// a shell.
func SplitCommand(s string) ([]string, error) {
	var (
		args  []string
		cur   strings.Builder
		inArg bool
		quote rune
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '"' && r == '\\' && i+1 < len(rs) && (rs[i+1] == '"' || rs[i+1] == '\\'):
			i++
			cur.WriteRune(rs[i])
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote = r
			inArg = true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		case r == '\\' && i+1 < len(rs) && (rs[i+1] == '"' || rs[i+1] == '\'' || rs[i+1] == '\\' || rs[i+1] == ' '):
			i++
			cur.WriteRune(rs[i])
			inArg = true
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("the command %q has an unterminated %c quote", s, quote)
	}
	if inArg {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("the command is empty")
	}
	return args, nil
}
