// Package pkgcmd holds what the package commands (search, add, remove, install, pack,
// publish) share: choosing the registry (--registry, then HALO_REGISTRY, then "registry" in
// halo.json, then the one that ships with Halo), building the pkgmgr.Project with the CLI's
// HTTP client, environment and the user's trust file, the names of built-in providers, and
// printing permissions.
package pkgcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"halolang.dev/halo/cmd/halo/internal/projconf"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/host/policy/fold"
	"halolang.dev/halo/host/tool/builtin"
	"halolang.dev/halo/host/tool/mcp"
	"halolang.dev/halo/host/tool/sandbox"
	"halolang.dev/halo/pkgmgr"
	"halolang.dev/halo/registry"
)

// RegistryEnv is the variable that names the registry when --registry is not given.
const RegistryEnv = "HALO_REGISTRY"

// RegistryLocation picks the registry: the flag, then HALO_REGISTRY, then halo.json's
// "registry", then "" (the default registry).
func RegistryLocation(f *cmdutil.Factory, flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if v := f.Env.Get(RegistryEnv); v != "" {
		return v, nil
	}
	cfg, err := projconf.Read(f.Dir)
	if err != nil {
		return "", err
	}
	return cfg.Registry, nil
}

// HTTPClient is the client registries and package URLs are fetched with. Its trust roots are
// the system's (SSL_CERT_FILE and SSL_CERT_DIR apply, as for any Go program).
func HTTPClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Minute}
}

// NewProject returns the package state of the working folder.
func NewProject(f *cmdutil.Factory, registryLoc string) (*pkgmgr.Project, error) {
	def, err := registry.Default()
	if err != nil {
		return nil, err
	}
	signed, err := registry.SignedPackages(def)
	if err != nil {
		return nil, err
	}
	return &pkgmgr.Project{
		Dir:        f.Dir,
		Registry:   registryLoc,
		Registries: pkgmgr.RegistryOptions{Client: HTTPClient(), Default: def},
		Reserved:   Reserved(),
		Build:      pkgmgr.GoBuilder("go", f.Env.List()),
		TrustFile:  TrustFile(f.Env),
		Warn:       Warn(f),
		// Publisher keys trusted without asking (issue 18): the project's own.
		BuiltInKeys: registry.BuiltInKeys(),
		// An unsigned or renamed copy of a first-party package is refused from any registry,
		// and publishers are compared with look-alikes folded (issue 27).
		KnownSigned:   signed,
		FoldPublisher: FoldPublisher,
	}, nil
}

// FoldPublisher folds a publisher name's look-alikes as host/policy folds them for its
// detectors (Cyrillic and Greek letters, fullwidth forms, accents, invisible characters).
func FoldPublisher(name string) string { return fold.String(name, fold.Options{}).Folded }

// TrustFile is the user's trust file: halo/trust.json in the user's config folder, found as
// os.UserConfigDir does but from the environment handed in ($XDG_CONFIG_HOME, else
// $HOME/.config on Linux and BSD; $HOME/Library/Application Support on macOS; %AppData% on
// Windows). "" when the environment names none: nothing is trusted then.
func TrustFile(env cmdutil.Env) string {
	dir := env.UserDir("XDG_CONFIG_HOME", ".config", "AppData")
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "halo", "trust.json")
}

// Warn returns how package code warns the user: a line on stderr.
func Warn(f *cmdutil.Factory) func(msg string) {
	return func(msg string) { fmt.Fprintf(f.IO.ErrOut, "halo: warning: %s\n", termsafe.String(msg)) }
}

// OpenRegistry opens the registry at loc for reading its index.
func OpenRegistry(f *cmdutil.Factory, loc string) (*pkgmgr.Registry, error) {
	def, err := registry.Default()
	if err != nil {
		return nil, err
	}
	return pkgmgr.OpenRegistry(loc, pkgmgr.RegistryOptions{Client: HTTPClient(), Default: def, Dir: f.Dir})
}

// Reserved reports whether a name belongs to a built-in provider, which no package may take.
func Reserved() func(string) bool {
	status := sandbox.Status{}
	names := map[string]bool{mcp.Type(nil).Name: true}
	for _, t := range builtin.New(builtin.Config{Status: &status}).Types() {
		names[t.Name] = true
	}
	return func(n string) bool { return names[n] }
}

// Coded returns err as it is.
//
// Deprecated: the root command prints every error's code (`halo: message [CODE]`); return the
// error itself. Coded remains only until the branches that call it are merged.
func Coded(err error) error { return err }

// PrintPermissions writes what a package can reach, one line each, under indent.
func PrintPermissions(w io.Writer, p pkgmgr.Permissions, indent string) {
	list := func(s []string) string {
		if len(s) == 0 {
			return "none"
		}
		return strings.Join(s, ", ")
	}
	fmt.Fprintf(w, "%snetwork: %s\n", indent, list(p.Network))
	fmt.Fprintf(w, "%sreads env: %s\n", indent, list(p.Env))
	if len(p.Spawn) > 0 {
		fmt.Fprintf(w, "%sstarts programs: %s\n", indent, list(p.Spawn))
	}
	code := "no"
	if p.Code {
		code = "yes (a plugin process that sees only the variables above)"
	}
	fmt.Fprintf(w, "%sruns its own code: %s\n", indent, code)
	if p.NeedsTrust() {
		fmt.Fprintf(w, "%sneeds --trust: yes\n", indent)
	}
}

// WriteJSON writes v indented, for --json, through termsafe: control characters JSON leaves
// raw (DEL, C1, bidirectional controls) are written as \uXXXX escapes, which decode to the
// same value.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(termsafe.Writer(w))
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Declarations shows how to declare a package's providers: `tool X : Stripe(...)`, with the
// base URL's {{name}} parts as named arguments (`Jira(site: "...")`).
func Declarations(m *pkgmgr.Manifest) string {
	var parts []string
	for _, name := range m.ProviderNames() {
		p := m.Providers[name]
		args := "..."
		if t := pkgmgr.Templates(p.BaseURL); len(t) > 0 {
			var named []string
			for _, n := range t {
				named = append(named, n+`: "..."`)
			}
			args = strings.Join(named, ", ")
		}
		parts = append(parts, "tool X : "+name+"("+args+")")
	}
	return strings.Join(parts, ", ")
}
