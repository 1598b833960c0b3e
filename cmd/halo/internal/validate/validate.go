// Package validate implements `halo validate [files or folders]`: parse and check a program,
// print every diagnostic at once, exit 1 on any error.
package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/halo-lang/halo/cmd/halo/internal/cmdutil"
	"github.com/halo-lang/halo/cmd/halo/internal/termsafe"
	"github.com/halo-lang/halo/host/check"
	"github.com/halo-lang/halo/host/lang"
	"github.com/halo-lang/halo/host/runtime"
	"github.com/halo-lang/halo/host/tool"
	"github.com/halo-lang/halo/host/tool/builtin"
	"github.com/halo-lang/halo/host/tool/mcp"
	"github.com/halo-lang/halo/host/tool/sandbox"
)

// Options are `halo validate`'s inputs.
type Options struct {
	IO cmdutil.IOStreams
	// Dir is the working folder: relative paths and ./halo.lock are read from it.
	Dir string
	// Paths are the files and folders to validate; empty means Dir.
	Paths []string
	JSON  bool
}

// NewCmdValidate builds `halo validate`. runF, when not nil, replaces validateRun (tests).
func NewCmdValidate(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "validate [file or folder ...]",
		Short: "Check .halo files and report every problem",
		Long: `Parse and check the .halo files named (a folder means its .halo files; the default is
the current folder) as one program. Every problem is printed, as
file:line:col: error|warning: message [CODE]. The exit status is 1 when any is an error.
Provider names of installed packages are read from halo.lock; no package code is loaded.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IO = f.IO
			opts.Dir = f.Dir
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return validateRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

// Result is the --json output.
type Result struct {
	Valid       bool             `json:"valid"`
	Files       []string         `json:"files"`
	Errors      int              `json:"errors"`
	Warnings    int              `json:"warnings"`
	Diagnostics lang.Diagnostics `json:"diagnostics"`
}

func validateRun(opts *Options) error {
	paths := opts.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	prog, diags := lang.Load(opts.Dir, paths)
	providers, lockDiags := lockProviders(opts.Dir, paths)
	diags = append(diags, lockDiags...)
	known := map[string]bool{}
	for _, p := range providers {
		known[p] = true
	}
	// Declarations are checked by their provider types where those can check without
	// loading anything: MCP(...)'s options, the built-ins' methods (an agent's tool: T is
	// checked against its policies). Package providers are only names here.
	checks := tool.NewRegistry()
	if err := checks.Add(mcp.Type(nil)); err != nil {
		return err
	}
	for _, t := range builtin.New(builtin.Config{Status: &sandbox.Status{}}).Types() {
		if err := checks.Add(t); err != nil {
			return err
		}
	}
	cfg := runtime.CheckConfig(checks)
	cfg.IsProvider = func(name string) bool { return known[name] }
	cfg.Providers = providers
	diags = append(diags, check.Check(prog, cfg)...)
	diags.Sort()

	res := Result{Files: []string{}, Diagnostics: diags}
	if res.Diagnostics == nil {
		res.Diagnostics = lang.Diagnostics{}
	}
	for _, f := range prog.Files {
		res.Files = append(res.Files, f.Name)
	}
	for _, d := range diags {
		if d.Severity == lang.Error {
			res.Errors++
		} else {
			res.Warnings++
		}
	}
	res.Valid = res.Errors == 0
	if len(prog.Files) == 0 && res.Errors == 0 {
		res.Valid = false
		res.Errors++
		d := lang.Diagnostic{Pos: lang.Pos{File: paths[0]}, Severity: lang.Error, Code: lang.CodeIO, Message: "no .halo files found"}
		res.Diagnostics = append(res.Diagnostics, d)
	}

	if opts.JSON {
		enc := json.NewEncoder(termsafe.Writer(opts.IO.Out))
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		for _, d := range res.Diagnostics {
			fmt.Fprintln(opts.IO.ErrOut, termsafe.String(d.String())) // quotes the files' text
		}
		if res.Valid {
			fmt.Fprintf(opts.IO.Out, "ok: %d %s valid%s\n", len(res.Files), plural(len(res.Files), "file"), warnText(res.Warnings))
		} else {
			fmt.Fprintf(opts.IO.ErrOut, "%d %s, %d %s\n", res.Errors, plural(res.Errors, "error"), res.Warnings, plural(res.Warnings, "warning"))
		}
	}
	if !res.Valid {
		return cmdutil.Silent(cmdutil.ExitFailed)
	}
	return nil
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func warnText(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d %s", n, plural(n, "warning"))
}

// lockProviders reads the provider names halo.lock lists, from the working folder and from
// each folder named on the command line. It reads the lock as data only: no package is
// loaded. A missing lock means no packages; a malformed one is an error diagnostic.
func lockProviders(dir string, paths []string) ([]string, lang.Diagnostics) {
	var diags lang.Diagnostics
	seen := map[string]bool{}
	var names []string
	folders := []string{"."}
	for _, p := range paths {
		if st, err := os.Stat(abs(dir, p)); err == nil && st.IsDir() {
			folders = append(folders, p)
		}
	}
	readLocks := map[string]bool{}
	for _, folder := range folders {
		lock := filepath.Join(folder, "halo.lock")
		full := filepath.Clean(abs(dir, lock))
		if readLocks[full] {
			continue
		}
		readLocks[full] = true
		b, err := os.ReadFile(full)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			diags.Add(lang.Pos{File: lock}, lang.Error, lang.CodeIO, "read halo.lock: %v", err)
			continue
		}
		var data struct {
			Tools map[string]struct {
				Providers []string `json:"providers"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(b, &data); err != nil {
			diags.Add(lang.Pos{File: lock}, lang.Error, lang.CodeIO, "halo.lock is not valid JSON (%v); run halo install to rewrite it", err)
			continue
		}
		for _, t := range data.Tools {
			for _, p := range t.Providers {
				if !seen[p] {
					seen[p] = true
					names = append(names, p)
				}
			}
		}
	}
	sort.Strings(names)
	return names, diags
}

func abs(dir, p string) string {
	if dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
