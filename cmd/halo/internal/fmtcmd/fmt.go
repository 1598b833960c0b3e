// Package fmtcmd implements `halo fmt [file or folder ...]`: rewrite .halo files in the one
// canonical layout (host/lang's Format), or list, diff or check the files that would change.
package fmtcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/diagtext"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/internal/linediff"
	"halolang.dev/halo/internal/safefile"
)

// Options are `halo fmt`'s inputs.
type Options struct {
	F  *cmdutil.Factory
	IO cmdutil.IOStreams
	// Dir is the working folder relative paths are read from.
	Dir string
	// Paths are the files and folders to format; empty means Dir, "-" standard input.
	Paths []string
	// List, Diff and Check report instead of writing: the files that would change, how,
	// and (Check) exit 1 when any would.
	List, Diff, Check bool
	JSON              bool
}

// NewCmdFmt builds `halo fmt`. runF, when not nil, replaces fmtRun (tests).
func NewCmdFmt(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "fmt [file or folder ...]",
		Short: "Format .halo files in the canonical layout",
		Long: `Rewrite the .halo files named (a folder means its .halo files, not those of its
subfolders, nor links; the default is the current folder) in Halo's one canonical layout,
keeping every comment, and print the name of each file that changed. "-" formats standard
input to standard output. A file that does not parse is reported and left as it is; a file is
written through a temporary file renamed over it, so an interrupted run leaves every file
whole. Formatting a formatted file changes nothing.

With -l, -d or --check nothing is written: -l lists the files that would change, -d shows
how, --check lists them and exits 1 when any would (for CI).`,
		Example: `  # format the project in the current folder
  halo fmt

  # in CI: fail when a file is not formatted, and show how
  halo fmt --check -d flows/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.F = f
			opts.IO = f.IO
			opts.Dir = f.Dir
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return fmtRun(opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.List, "list", "l", false, "list the files that would change; write nothing")
	cmd.Flags().BoolVarP(&opts.Diff, "diff", "d", false, "show how each file would change; write nothing")
	cmd.Flags().BoolVar(&opts.Check, "check", false, "list the files that would change and exit 1 when any would; write nothing")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

// Result is the --json output.
type Result struct {
	// Files are the files looked at, each with whether it changed (or would).
	Files []FileResult `json:"files"`
	// Changed counts the files that changed (or would); Failed those that did not parse or
	// could not be read or written.
	Changed int `json:"changed"`
	Failed  int `json:"failed"`
	// Written reports whether changed files were written (not with -l, -d or --check).
	Written bool `json:"written"`
}

// A FileResult is one file's outcome.
type FileResult struct {
	File    string `json:"file"`
	Changed bool   `json:"changed"`
	// Diff is how it would change, with -d.
	Diff string `json:"diff,omitempty"`
	// Diagnostics say why it was not formatted.
	Diagnostics lang.Diagnostics `json:"diagnostics,omitempty"`
}

func fmtRun(opts *Options) error {
	paths := opts.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	write := !opts.List && !opts.Diff && !opts.Check
	res := Result{Files: []FileResult{}, Written: write}
	style := diagtext.StyleFor(opts.F)
	for _, p := range paths {
		if p == "-" {
			if err := fmtStdin(opts, &res); err != nil {
				return err
			}
			continue
		}
		files, err := expand(opts.Dir, p)
		if err != nil {
			d := lang.Diagnostic{Pos: lang.Pos{File: p}, Severity: lang.Error, Code: lang.CodeIO, Message: err.Error()}
			res.Files = append(res.Files, FileResult{File: p, Diagnostics: lang.Diagnostics{d}})
			res.Failed++
			continue
		}
		for _, name := range files {
			fr := fmtFile(opts.Dir, name, write, opts.Diff)
			if fr.Changed {
				res.Changed++
			}
			if fr.Diagnostics != nil {
				res.Failed++
			}
			res.Files = append(res.Files, fr)
		}
	}
	if opts.JSON {
		enc := json.NewEncoder(termsafe.Writer(opts.IO.Out))
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		for _, fr := range res.Files {
			if fr.Diagnostics != nil {
				diagtext.Write(opts.IO.ErrOut, fr.Diagnostics, nil, style)
				continue
			}
			if !fr.Changed || fr.File == "-" {
				continue
			}
			if opts.Diff {
				fmt.Fprint(opts.IO.Out, termsafe.String(fr.Diff))
			} else {
				fmt.Fprintln(opts.IO.Out, termsafe.String(fr.File))
			}
		}
	}
	if res.Failed > 0 || opts.Check && res.Changed > 0 {
		return cmdutil.Silent(cmdutil.ExitFailed)
	}
	return nil
}

// fmtStdin formats standard input to standard output.
func fmtStdin(opts *Options, res *Result) error {
	src, err := io.ReadAll(io.LimitReader(opts.IO.In, lang.MaxSourceBytes+1))
	if err != nil {
		return fmt.Errorf("read standard input: %w", err)
	}
	fr := FileResult{File: "-"}
	if len(src) > lang.MaxSourceBytes {
		fr.Diagnostics = lang.Diagnostics{{Pos: lang.Pos{File: "-"}, Severity: lang.Error, Code: lang.CodeIO, Message: fmt.Sprintf("standard input is over %d bytes", lang.MaxSourceBytes)}}
		res.Failed++
		res.Files = append(res.Files, fr)
		return nil
	}
	out, diags := lang.Format("-", src)
	if diags != nil {
		diags.Locate(func(string) ([]byte, bool) { return src, true })
		fr.Diagnostics = diags
		res.Failed++
		res.Files = append(res.Files, fr)
		return nil
	}
	fr.Changed = !bytes.Equal(out, src)
	if fr.Changed {
		res.Changed++
	}
	res.Files = append(res.Files, fr)
	if !opts.JSON {
		if _, err := opts.IO.Out.Write(out); err != nil {
			return err
		}
	}
	return nil
}

// fmtFile formats one file, writing it when write is set and it changed.
func fmtFile(dir, name string, write, diff bool) FileResult {
	fr := FileResult{File: name}
	full := lang.Resolve(dir, name)
	fail := func(err error) FileResult {
		fr.Diagnostics = lang.Diagnostics{{Pos: lang.Pos{File: name}, Severity: lang.Error, Code: lang.CodeIO, Message: err.Error()}}
		return fr
	}
	src, err := safefile.Read(full, lang.MaxSourceBytes)
	if err != nil {
		return fail(err)
	}
	out, diags := lang.Format(name, src)
	if diags != nil {
		diags.Locate(func(string) ([]byte, bool) { return src, true })
		fr.Diagnostics = diags
		return fr
	}
	if bytes.Equal(out, src) {
		return fr
	}
	fr.Changed = true
	if diff {
		fr.Diff = unified(name, string(src), string(out))
	}
	if write {
		if err := replace(full, out); err != nil {
			return fail(err)
		}
	}
	return fr
}

// replace writes data to path through a temporary file in the same folder renamed over it,
// so the file is either the old text or the new one whatever happens; the file keeps its
// mode. A link is followed: the file it names is written.
func replace(path string, data []byte) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	st, err := os.Stat(real)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(real), "."+filepath.Base(real)+".*.fmt")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), real); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	done = true
	return nil
}

// expand lists the files p names as lang.Expand does, leaving out the links a folder has:
// they may point anywhere.
func expand(dir, p string) ([]string, error) {
	files, err := lang.Expand(dir, p)
	if err != nil || len(files) == 1 && files[0] == p {
		return files, err
	}
	out := files[:0]
	for _, name := range files {
		if st, err := os.Lstat(lang.Resolve(dir, name)); err == nil && st.Mode().IsRegular() {
			out = append(out, name)
		}
	}
	return out, nil
}

// context is how many unchanged lines a diff shows around a change.
const context = 3

// unified shows old against new as a unified diff's hunks (linediff's line diff, cut to the
// changes and a few lines around them).
func unified(name, old, new string) string {
	lines := strings.Split(strings.TrimSuffix(linediff.Diff(strings.Split(strings.TrimSuffix(old, "\n"), "\n"), strings.Split(strings.TrimSuffix(new, "\n"), "\n"), 5000), "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s (formatted)\n", name, name)
	oldLine, newLine := 1, 1
	for i := 0; i < len(lines); {
		if strings.HasPrefix(lines[i], "  ") {
			i++
			oldLine++
			newLine++
			continue
		}
		// A hunk: from context lines before the change to context lines after the last
		// change that is not more than 2*context unchanged lines from the next.
		start := max(0, i-context)
		for k := start; k < i; k++ {
			oldLine--
			newLine--
		}
		end := i
		for end < len(lines) {
			if !strings.HasPrefix(lines[end], "  ") {
				end++
				continue
			}
			run := end
			for run < len(lines) && strings.HasPrefix(lines[run], "  ") {
				run++
			}
			if run == len(lines) || run-end > 2*context {
				end = min(run, end+context)
				break
			}
			end = run
		}
		var oldN, newN int
		for _, l := range lines[start:end] {
			if !strings.HasPrefix(l, "+ ") {
				oldN++
			}
			if !strings.HasPrefix(l, "- ") {
				newN++
			}
		}
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", oldLine, oldN, newLine, newN)
		for _, l := range lines[start:end] {
			b.WriteString(l[:1] + l[2:] + "\n")
		}
		oldLine += oldN
		newLine += newN
		i = end
	}
	return b.String()
}
