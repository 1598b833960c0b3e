// Package complete gives the commands their shell completions (cobra's ValidArgsFunction,
// which `halo completion bash|zsh|fish|powershell` scripts call): the pipelines a .halo file
// declares, with their doc comments; the runs in the project's .halo/runs, newest first, with
// their status and pipeline; the packages of the registry and those halo.lock lists; the stores
// the .halo files declare. What cannot be read completes nothing. What a completion shows comes
// from files a repository may ship, so it is cut to one line, with what a terminal would act
// on shown as escapes.
package complete

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/pkgcmd"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/store"
	"halolang.dev/halo/pkgmgr"
)

// A Func is cobra's ValidArgsFunction.
type Func = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective)

// FilePipeline completes FILE [PIPELINE]: .halo files, then the pipelines FILE declares.
func FilePipeline(f *cmdutil.Factory) Func {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			return haloFiles()
		case 1:
			return Pipelines(f, args[0]), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// FileRun completes FILE RUNID: .halo files, then the runs of .halo/runs (only the paused
// ones, and "last", when paused is set: what halo resume takes).
func FileRun(f *cmdutil.Factory, paused bool) Func {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			return haloFiles()
		case 1:
			return Runs(f, paused), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// RegistryPackages completes a package name of the registry the command's --registry flag
// (else HALO_REGISTRY, halo.json, the default) names; files and folders too, since a spec
// may be a package folder or file.
func RegistryPackages(f *cmdutil.Factory) Func {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		flag, _ := cmd.Flags().GetString("registry")
		return Packages(f, flag), cobra.ShellCompDirectiveDefault
	}
}

// InstalledPackages completes a package name halo.lock lists.
func InstalledPackages(f *cmdutil.Factory) Func {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		lock, err := pkgmgr.ReadLock(f.Dir)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, n := range lock.Names() {
			if packageName(n) {
				out = append(out, cobra.CompletionWithDesc(n, line(lock.Tools[n].Version)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// StoreNames completes the File and VectorStore stores the command's --file values (else the
// .halo files of the working folder) declare, each with its kind, leaving out those already
// named: what halo index takes.
func StoreNames(f *cmdutil.Factory) Func {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		paths, _ := cmd.Flags().GetStringArray("file")
		if len(paths) == 0 {
			paths = []string{"."}
		}
		named := map[string]bool{}
		for _, a := range args {
			named[a] = true
		}
		prog, _ := lang.Load(f.Dir, paths)
		var out []cobra.Completion
		for _, d := range prog.Decls() {
			if td, ok := d.(*lang.ToolDecl); ok && store.IsStore(td.Provider.Name) && !named[td.Name.Name] {
				out = append(out, cobra.CompletionWithDesc(td.Name.Name, td.Provider.Name))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

func haloFiles() ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{"halo"}, cobra.ShellCompDirectiveFilterFileExt
}

// Pipelines lists the pipelines file declares, each with the first line of its doc comment.
func Pipelines(f *cmdutil.Factory, file string) []cobra.Completion {
	prog, _ := lang.Load(f.Dir, []string{file})
	var out []cobra.Completion
	for _, d := range prog.Decls() {
		if pd, ok := d.(*lang.PipelineDecl); ok {
			doc, _, _ := strings.Cut(pd.Doc, "\n")
			out = append(out, cobra.CompletionWithDesc(pd.Name.Name, line(doc)))
		}
	}
	return out
}

// maxRuns bounds how many run records a completion reads.
const maxRuns = 100

// Runs lists the newest runs of the project's .halo/runs (at most maxRuns), each with its
// status, pipeline and start; with paused, only the paused ones, after "last".
func Runs(f *cmdutil.Factory, paused bool) []cobra.Completion {
	// A completion never makes the store: a folder without one completes nothing.
	if st, err := os.Lstat(filepath.Join(f.RunsDir(), runstore.DBName)); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	store, err := f.OpenRuns(runstore.SQLiteOptions{})
	if err != nil {
		return nil
	}
	defer store.Close()
	q := runstore.Query{Limit: maxRuns}
	if paused {
		q.Status = runtime.Paused
	}
	page, err := store.List(context.Background(), q)
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	if paused {
		out = append(out, cobra.CompletionWithDesc("last", "the run that paused most recently"))
	}
	for _, r := range page.Runs {
		out = append(out, cobra.CompletionWithDesc(r.RunID, line(string(r.Status)+" "+r.Pipeline+" "+r.Started.Local().Format("2006-01-02 15:04"))))
	}
	return out
}

// Packages lists the packages of the registry at flag (as halo add and halo search pick
// it), each with its description. A remote registry gets a few seconds.
func Packages(f *cmdutil.Factory, flag string) []cobra.Completion {
	loc, err := pkgcmd.RegistryLocation(f, flag)
	if err != nil {
		return nil
	}
	reg, err := pkgcmd.OpenRegistry(f, loc)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	idx, err := reg.Index(ctx)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(idx.Packages))
	for n := range idx.Packages {
		if packageName(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]cobra.Completion, len(names))
	for i, n := range names {
		out[i] = cobra.CompletionWithDesc(n, line(idx.Packages[n].Description))
	}
	return out
}

// packageName reports whether n is a name a package may have (lowercase letters, digits and
// dashes): a registry's other keys are not offered to a shell.
func packageName(n string) bool {
	if n == "" || len(n) > 63 {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// line makes text from a file fit a completion's description: one line of at most 80
// characters, with what a terminal would act on shown as escapes.
func line(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range termsafe.String(s) {
		if unicode.IsSpace(r) {
			r = ' '
		}
		if n == 80 {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return strings.TrimSpace(b.String())
}
