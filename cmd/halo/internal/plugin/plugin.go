// Package plugin implements `halo plugin`, the commands for plugin authors: `halo plugin init
// NAME` writes a new Go tool provider project (go.mod requiring the SDK, main.go, a test that
// uses sdktest, and a module package's halo-tool.json) that `go test` passes and `halo pack`
// builds.
package plugin

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"text/template"

	"halolang.dev/halo/errcode"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/pkgcmd"
	"halolang.dev/halo/pkgmgr"
	"halolang.dev/halo/sdk"
)

// NewCmdPlugin builds `halo plugin` and its subcommands.
func NewCmdPlugin(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Write Go tool providers (plugins) for Halo",
		Example: `  halo plugin init hello-tool
  halo plugin init acme-orders --module github.com/acme/halo-orders`,
		Long: `Commands for plugin authors. A plugin is a Go program built with the Halo SDK
(halolang.dev/halo/sdk) and shipped in a module tool package; docs/plugins.md is the
guide.`,
	}
	cmd.AddCommand(NewCmdInit(f, nil))
	return cmd
}

// InitOptions are `halo plugin init`'s inputs.
type InitOptions struct {
	Factory *cmdutil.Factory
	// Name is the package name (lowercase letters, digits and dashes).
	Name string
	// Dir is the folder to create; empty means ./Name.
	Dir string
	// Module is the Go module path; empty means example.com/Name.
	Module string
	// Provider is the provider name; empty means Name in CamelCase.
	Provider string
	// SDKDir is a local Halo checkout whose sdk/ and proto/ the new go.mod replaces the
	// released SDK with; empty means the released SDK.
	SDKDir string
	JSON   bool
}

// NewCmdInit builds `halo plugin init`. runF, when not nil, replaces initRun (tests).
func NewCmdInit(f *cmdutil.Factory, runF func(*InitOptions) error) *cobra.Command {
	opts := &InitOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "init NAME",
		Short: "Create a new Go tool provider project",
		Long: `Create the folder NAME (or --dir) with a working tool provider written with the Halo SDK:

  go.mod          requires halolang.dev/halo/sdk ` + "v" + sdk.Version + `
  main.go         a provider with one method, served by sdk.Serve
  main_test.go    tests that call it through the real gRPC path (sdk/sdktest)
  halo-tool.json  the module package's manifest: executables for linux and darwin
                  (amd64, arm64), built from the folder by halo pack
  .gitignore      keeps built executables and packed files out of version control

Then: go mod tidy (fetches the SDK), go test ./..., halo pack . (builds and packs it), and
halo add --trust in a project whose pipeline calls it; init prints these steps.
With --sdk DIR, go.mod uses the SDK and the plugin contract of the Halo checkout at DIR
instead of the released ones (replace directives). Nothing is written if the folder exists.`,
		Example: `  halo plugin init hello-tool
  halo plugin init acme-orders --module github.com/acme/halo-orders --provider AcmeOrders
  halo plugin init hello-tool --sdk ~/src/halo`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return initRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "folder to create (default: ./NAME)")
	cmd.Flags().StringVar(&opts.Module, "module", "", "Go module path (default: example.com/NAME)")
	cmd.Flags().StringVar(&opts.Provider, "provider", "", "provider name, as declarations write it (default: NAME in CamelCase)")
	cmd.Flags().StringVar(&opts.SDKDir, "sdk", "", "a local Halo checkout to build against instead of the released SDK")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print what was created as JSON")
	return cmd
}

// GoVersion is the go line of a new plugin's go.mod: the SDK module's own.
const GoVersion = "1.26.0"

// Platforms are the platforms a new plugin's manifest lists, as Terraform providers ship them.
var Platforms = []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"}

//go:embed template/*.tmpl
var templates embed.FS

var (
	reName     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`) })
	reProvider = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`) })
	reModule   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*(/[A-Za-z0-9_.~+-]+)*$`)
	})
)

// Created is the --json output.
type Created struct {
	Dir      string   `json:"dir"`
	Name     string   `json:"name"`
	Module   string   `json:"module"`
	Provider string   `json:"provider"`
	SDK      string   `json:"sdk"`
	Files    []string `json:"files"`
}

// data is what the templates see.
type data struct {
	Name, Module, Provider, SDKVersion, GoVersion, SDKDir string
	Platforms                                             []string
}

// PlatformDir is a platform's folder under bin/: linux/amd64 → linux-amd64.
func (data) PlatformDir(p string) string { return strings.ReplaceAll(p, "/", "-") }

// CamelCase turns a package name into a provider name: hello-tool → HelloTool. It returns ""
// when the result would not be a provider name (a name starting with a digit).
func CamelCase(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	if !reProvider().MatchString(b.String()) {
		return ""
	}
	return b.String()
}

func initRun(opts *InitOptions) error {
	f := opts.Factory
	if !reName().MatchString(opts.Name) {
		return cmdutil.FlagError("plugin name %q: use lowercase letters, digits and dashes, starting with a letter or digit, at most 63 characters (it is the package's name)", opts.Name)
	}
	d := data{Name: opts.Name, Module: opts.Module, Provider: opts.Provider, SDKVersion: sdk.Version, GoVersion: GoVersion, Platforms: Platforms}
	if d.Module == "" {
		d.Module = "example.com/" + opts.Name
	}
	if !reModule().MatchString(d.Module) {
		return cmdutil.FlagError("--module %q is not a Go module path (example.com/name)", d.Module)
	}
	if d.Provider == "" {
		if d.Provider = CamelCase(opts.Name); d.Provider == "" {
			return cmdutil.FlagError("%q makes no provider name (a capital letter, then letters and digits): choose one with --provider", opts.Name)
		}
	}
	if !reProvider().MatchString(d.Provider) {
		return cmdutil.FlagError("--provider %q: a capital letter, then letters and digits", d.Provider)
	}
	sdkRef := "halolang.dev/halo/sdk v" + sdk.Version
	if opts.SDKDir != "" {
		abs := f.Abs(opts.SDKDir)
		for _, m := range []string{"sdk", "proto"} {
			if _, err := os.Stat(filepath.Join(abs, m, "go.mod")); err != nil {
				return cmdutil.FlagError("--sdk %s: not a Halo checkout (no %s/go.mod)", opts.SDKDir, m)
			}
		}
		if strings.ContainsAny(abs, "\"\n\t ") {
			return cmdutil.FlagError("--sdk %s: the path has a space, quote or control character go.mod cannot hold", opts.SDKDir)
		}
		d.SDKDir = filepath.ToSlash(abs)
		sdkRef = filepath.Join(abs, "sdk")
	}
	folder := opts.Dir
	if folder == "" {
		folder = opts.Name
	}
	dir := f.Abs(folder)
	if _, err := os.Lstat(dir); err == nil {
		return errcode.New(cmdutil.CodeFileExists, "%s already exists; nothing was written (halo plugin init only creates a new folder)", folder)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	files := []struct{ name, tmpl string }{
		{"go.mod", "go.mod.tmpl"},
		{"main.go", "main.go.tmpl"},
		{"main_test.go", "main_test.go.tmpl"},
		{pkgmgr.ManifestFile, "halo-tool.json.tmpl"},
		{".gitignore", "gitignore.tmpl"},
	}
	rendered := make([][]byte, len(files))
	for i, file := range files {
		b, err := render(file.tmpl, d)
		if err != nil {
			return err
		}
		rendered[i] = b
	}
	// The manifest must be one halo pack accepts: check it before anything is written.
	if _, err := pkgmgr.ParseManifest(rendered[3]); err != nil {
		return err
	}
	// Written into a temporary sibling and renamed, so a failure leaves no half-made folder.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".halo-plugin-init-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for i, file := range files {
		if err := os.WriteFile(filepath.Join(tmp, file.name), rendered[i], 0o644); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("create %s: %w", folder, err)
	}
	out := Created{Dir: folder, Name: opts.Name, Module: d.Module, Provider: d.Provider, SDK: sdkRef}
	for _, file := range files {
		out.Files = append(out.Files, file.name)
	}
	if opts.JSON {
		return pkgcmd.WriteJSON(f.IO.Out, out)
	}
	w := f.IO.Out
	fmt.Fprintf(w, "✓ created %s: provider %s in module %s (%s)\n", folder, d.Provider, d.Module, strings.Join(out.Files, ", "))
	fmt.Fprintf(w, "    sdk: %s\n", sdkRef)
	file := opts.Name + "-0.1.0.halotool"
	fmt.Fprintf(w, "Next:\n")
	fmt.Fprintf(w, "    cd %s\n", cmdutil.ShellQuote(folder))
	fmt.Fprintf(w, "    go mod tidy      # fetches the SDK and writes go.sum\n")
	fmt.Fprintf(w, "    go test ./...    # calls the provider through the real gRPC path\n")
	fmt.Fprintf(w, "    halo pack .      # builds the plugin for %s and packs %s\n", strings.Join(Platforms, ", "), file)
	fmt.Fprintf(w, "Then add it to a project (under vendor/, so halo install finds it on other machines too):\n")
	fmt.Fprintf(w, "    mkdir -p ../app/vendor && cp %s ../app/vendor/ && cd ../app\n", file)
	fmt.Fprintf(w, "    halo add vendor/%s --trust\n", file)
	fmt.Fprintf(w, "and call it from a pipeline, in app/greet.halo:\n")
	fmt.Fprintf(w, "    tool Greeting : %s()\n\n", d.Provider)
	fmt.Fprintf(w, "    pipeline Hello(who: String) -> JSON:\n")
	fmt.Fprintf(w, "      who |> Greeting.greet(name: who)\n")
	fmt.Fprintf(w, "then: halo run greet.halo Hello --input who=Ada (docs/plugins.md has the whole way)\n")
	return nil
}

func render(name string, d data) ([]byte, error) {
	t, err := template.ParseFS(templates, "template/"+name)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b.Bytes(), nil
}
