// Package validate implements `halo validate [files or folders]`: parse and check a program,
// print every diagnostic at once, exit 1 on any error.
package validate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"halolang.dev/halo/cmd/halo/internal/projconf"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/diagtext"
	"halolang.dev/halo/cmd/halo/internal/providers"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/pkgmgr"
)

// Options are `halo validate`'s inputs.
type Options struct {
	F  *cmdutil.Factory
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
		Example: `  halo validate
  halo validate flows/ hello.halo
  halo validate --json`,
		Long: `Parse and check the .halo files named (a folder means its .halo files; the default is
the current folder) as one program. Every problem is printed: at a terminal with the
source line, the span underlined and a help line (in colour unless NO_COLOR is set),
otherwise one a line, as file:line:col: error|warning: message [CODE]. With --json each
diagnostic has its start and end (line, column, byte offset) and its suggested
replacements. The exit status is 1 when any is an error.
The program is checked as halo run checks it, against the built-in providers, MCP and the
provider names halo.lock lists (in the current folder and in each folder named); no package
is loaded, so packages need not be installed.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.F = f
			opts.IO = f.IO
			opts.Dir = f.Dir
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			// One pass over a program whose tree stays live until the process exits.
			cmdutil.OneShotGC(f.Env)
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
	// The program is checked as every command that runs it checks it (runtime.Validate),
	// against the providers it may declare: the built-ins, MCP and the provider names of
	// halo.lock, read by pkgmgr as halo run reads it. No package is loaded.
	reg, err := providers.Declared(opts.F)
	if err != nil {
		return err
	}
	for _, folder := range lockFolders(opts.Dir, paths) {
		diags = append(diags, AddFolder(reg, opts.Dir, folder)...)
	}
	diags = append(diags, runtime.Validate(prog, reg)...)
	diags.Sort()
	diags.Locate(prog.Source)

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
		diagtext.Write(opts.IO.ErrOut, res.Diagnostics, prog.Source, diagtext.StyleFor(opts.F))
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

// AddFolder adds to reg the providers folder's halo.lock names (folder read from dir) and
// returns the problems of the project's files there, each at its file: a halo.json or a
// halo.lock that the commands that read them would refuse.
func AddFolder(reg *tool.Registry, dir, folder string) lang.Diagnostics {
	var diags lang.Diagnostics
	// halo.json is checked as the commands that read it check it.
	if _, err := projconf.Read(abs(dir, folder)); err != nil {
		diags.Add(lang.Pos{File: filepath.Join(folder, projconf.FileName)}, lang.Error, errcode.Code(err), "%s", strings.TrimPrefix(err.Error(), projconf.FileName+": "))
	}
	if err := providers.AddDeclared(reg, abs(dir, folder)); err != nil {
		lock := filepath.Join(folder, pkgmgr.LockFile)
		code := errcode.Code(err)
		if code == "" {
			code = lang.CodeIO
		}
		diags.Add(lang.Pos{File: lock}, lang.Error, code, "%v", err)
	}
	return diags
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

// lockFolders lists the folders whose halo.lock names providers the program may declare: the
// working folder and each folder named on the command line.
func lockFolders(dir string, paths []string) []string {
	folders := []string{"."}
	seen := map[string]bool{filepath.Clean(abs(dir, ".")): true}
	for _, p := range paths {
		full := filepath.Clean(abs(dir, p))
		if st, err := os.Stat(full); err == nil && st.IsDir() && !seen[full] {
			seen[full] = true
			folders = append(folders, p)
		}
	}
	return folders
}

func abs(dir, p string) string {
	if dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
