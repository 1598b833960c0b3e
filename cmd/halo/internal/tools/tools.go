// Package tools implements `halo tools`: every provider type the project can declare, with
// each method's parameters and effect, coloured by effect on a terminal, and the line that
// says what the plugin sandbox enforces on this system.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/providers"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/packages"
	"halolang.dev/halo/host/tool/sandbox"
)

// Options are the command's inputs.
type Options struct {
	Out   io.Writer
	JSON  bool
	Color bool
	// Dir is the project folder.
	Dir string
	// Build returns the registry; tests may hand in another.
	Build func() (*providers.Set, error)
	// Servers lists the methods of declared tools whose methods come from a server (MCP);
	// nil lists none.
	Servers func(ctx context.Context, reg *tool.Registry) []Declared
	// Described returns the methods of installed module providers as halo add or halo install
	// described them (shown only; nothing runs with them); nil lists none.
	Described func() map[string][]tool.Method
	Ctx       context.Context
}

// A Declared is one tool declared in the project's .halo files whose methods were asked of
// its server.
type Declared struct {
	Tool     string        `json:"tool"`
	Provider string        `json:"provider"`
	File     string        `json:"file,omitempty"`
	Methods  []tool.Method `json:"methods,omitempty"`
	Error    string        `json:"error,omitempty"`
	// Pins says what pinning its tools in halo.lock found; Warnings are descriptions that
	// read like prompt injections (pins.go).
	Pins     *PinReport `json:"pins,omitempty"`
	Warnings []string   `json:"warnings,omitempty"`
	// Sandbox says how its stdio server is confined; "" when it is not.
	Sandbox string `json:"sandbox,omitempty"`
}

// NewCmdTools builds `halo tools`. runF replaces the run in tests.
func NewCmdTools(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tool providers this project can use, with their methods and effects",
		Example: `  halo tools
  halo tools --json`,
		Long: `List every tool provider this project can declare (built-in, MCP, installed packages)
with each method's parameters and its effect: read, write or external. MCP tools declared in
this folder's .halo files are started (with a time limit) to list their methods.

The last line says what the plugin sandbox enforces on this system.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Out = f.IO.Out
			opts.Color = f.ColorEnabled()
			opts.Dir = f.Dir
			opts.Ctx = cmd.Context()
			opts.Build = func() (*providers.Set, error) { return providers.Build(f, f.Dir) }
			opts.Described = func() map[string][]tool.Method { return packages.Described(f.Dir) }
			opts.Servers = func(ctx context.Context, reg *tool.Registry) []Declared {
				return declaredServers(ctx, f, reg, 10*time.Second)
			}
			if runF != nil {
				return runF(opts)
			}
			return toolsRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

// Listing is what `halo tools --json` prints.
type Listing struct {
	Providers []Provider     `json:"providers"`
	Declared  []Declared     `json:"declared,omitempty"`
	Sandbox   sandbox.Status `json:"sandbox"`
}

// A Provider is one provider type in the listing.
type Provider struct {
	Name        string        `json:"name"`
	Kind        tool.Kind     `json:"kind"`
	Package     string        `json:"package,omitempty"`
	Description string        `json:"description"`
	Methods     []tool.Method `json:"methods"`
	// FromServer is set for types whose methods come from a server when a tool is declared.
	FromServer bool `json:"fromServer,omitempty"`
	// Described is set for module types whose methods are what the plugin said when the
	// package was installed (FromServer is then false).
	Described bool `json:"described,omitempty"`
}

func toolsRun(opts *Options) error {
	set, err := opts.Build()
	if err != nil {
		return err
	}
	ctx := opts.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	l := Listing{Sandbox: set.Sandbox, Providers: []Provider{}}
	var described map[string][]tool.Method
	if opts.Described != nil {
		described = opts.Described()
	}
	for _, t := range set.Registry.Types() {
		p := Provider{Name: t.Name, Kind: t.Kind, Package: t.Package, Description: t.Description, Methods: t.Methods, FromServer: t.Methods == nil}
		if ms, ok := described[t.Name]; ok && t.Methods == nil && t.Kind == tool.KindModule {
			p.Methods = append([]tool.Method(nil), ms...)
			p.FromServer, p.Described = false, true
		}
		if p.Methods == nil {
			p.Methods = []tool.Method{}
		}
		for i := range p.Methods {
			p.Methods[i].Effect = p.Methods[i].EffectOrDefault()
		}
		l.Providers = append(l.Providers, p)
	}
	if opts.Servers != nil {
		l.Declared = opts.Servers(ctx, set.Registry)
	}
	if opts.JSON {
		enc := json.NewEncoder(termsafe.Writer(opts.Out))
		enc.SetIndent("", "  ")
		return enc.Encode(l)
	}
	printListing(opts.Out, l, opts.Color)
	return nil
}

// ANSI colours by effect: green changes nothing, yellow changes local state, red acts
// outside.
var effectColor = map[tool.Effect]string{tool.Read: "\x1b[32m", tool.Write: "\x1b[33m", tool.External: "\x1b[31m"}

const (
	bold  = "\x1b[1m"
	dim   = "\x1b[2m"
	reset = "\x1b[0m"
)

// printListing writes the listing for a person. Names, descriptions, parameters and errors
// come from packages and MCP servers, so each goes through termsafe before it is painted.
func printListing(w io.Writer, l Listing, color bool) {
	clean := termsafe.String
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + reset
	}
	for i, p := range l.Providers {
		if i > 0 {
			fmt.Fprintln(w)
		}
		origin := string(p.Kind)
		if p.Package != "" {
			origin = "package " + p.Package
		}
		fmt.Fprintf(w, "%s %s\n", paint(bold, clean(p.Name)), paint(dim, "("+clean(origin)+")"))
		if p.Description != "" {
			fmt.Fprintf(w, "  %s\n", clean(p.Description))
		}
		if p.FromServer {
			fmt.Fprintf(w, "  methods come from the server; declare a tool with it in a .halo file to list them here\n")
		}
		printMethods(w, p.Methods, paint)
	}
	for _, d := range l.Declared {
		fmt.Fprintf(w, "\n%s %s\n", paint(bold, clean(d.Tool)), paint(dim, clean("(declared : "+d.Provider+location(d.File)+")")))
		if d.Error != "" {
			fmt.Fprintf(w, "  cannot list methods: %s\n", clean(d.Error))
			continue
		}
		printMethods(w, d.Methods, paint)
		printPins(w, d, paint)
	}
	line := l.Sandbox.String()
	if !l.Sandbox.Enforced() {
		line = paint(effectColor[tool.External], line)
	}
	fmt.Fprintf(w, "\n%s\n", line)
}

func location(file string) string {
	if file == "" {
		return ""
	}
	return ", " + file
}

func printMethods(w io.Writer, methods []tool.Method, paint func(code, s string) string) {
	sigs := make([]string, len(methods))
	width := 0
	for i, m := range methods {
		sigs[i] = termsafe.String(m.Name + "(" + strings.Join(signature(m.Params), ", ") + ")")
		width = max(width, len(sigs[i]))
	}
	for i, m := range methods {
		e := m.EffectOrDefault()
		effect := fmt.Sprintf("%-8s", e)
		fmt.Fprintf(w, "  %-*s  %s  %s\n", width, sigs[i], paint(effectColor[e], termsafe.String(effect)), termsafe.String(firstSentence(m.Description)))
	}
}

// firstSentence keeps a listing to one line per method; --json has the whole text. A
// sentence ends at a full stop followed by a space and a capital letter, so "e.g. jql",
// "(ch_... or py_...)" and "e.g. Europe/Paris" do not end one.
func firstSentence(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	for i := 0; i+2 < len(s); i++ {
		if s[i] != '.' || s[i+1] != ' ' || !unicode.IsUpper(rune(s[i+2])) {
			continue
		}
		before := strings.ToLower(s[:i])
		if strings.HasSuffix(before, ".") || strings.HasSuffix(before, "e.g") || strings.HasSuffix(before, "i.e") {
			continue
		}
		return s[:i+1]
	}
	return s
}

// signature lists a schema's parameters in their declared order, optional ones with "?".
func signature(schema json.RawMessage) []string {
	if len(schema) == 0 {
		return nil
	}
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	var out []string
	for _, name := range objectKeys(s.Properties) {
		if required[name] {
			out = append(out, name)
		} else {
			out = append(out, name+"?")
		}
	}
	return out
}

// objectKeys returns a JSON object's keys in the order they are written (a map would lose
// the order the provider chose).
func objectKeys(obj json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

// sortDeclared orders declared tools by file, then name.
func sortDeclared(ds []Declared) {
	sort.Slice(ds, func(i, j int) bool {
		if ds[i].File != ds[j].File {
			return ds[i].File < ds[j].File
		}
		return ds[i].Tool < ds[j].Tool
	})
}
