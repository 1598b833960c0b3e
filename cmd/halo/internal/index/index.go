// Package index implements `halo index [STORE ...]`: build or refresh the project's File and
// VectorStore indexes ahead of a run, with a progress bar at a terminal and plain lines
// otherwise, --rebuild to make an index again from nothing, and --json.
package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/complete"
	"halolang.dev/halo/cmd/halo/internal/projconf"
	"halolang.dev/halo/cmd/halo/internal/providers"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/store"
	"halolang.dev/halo/host/tool"
)

// Options are `halo index`'s inputs.
type Options struct {
	F *cmdutil.Factory
	// Stores are the store names to index; empty means every store the files declare.
	Stores []string
	// Files are --file: the .halo files (or folders) declaring the stores; empty means the
	// working folder.
	Files   []string
	Rebuild bool
	JSON    bool
	// Mock builds the mock indexes halo test and --mock runs use, with mock embeddings.
	Mock bool
	// Registry builds the tool registry; nil means providers.Build.
	Registry providers.RegistryFunc
}

// NewCmdIndex builds `halo index`. runF, when not nil, replaces indexRun (tests).
func NewCmdIndex(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "index [STORE ...]",
		Short: "Build or refresh the indexes of File and VectorStore stores",
		Long: `Build or refresh the index of each File and VectorStore the project's .halo files declare
(those named, or all of them), as a run does before a search: new and changed files are read,
chunked and indexed, removed ones dropped, and a VectorStore's new chunks embedded, in batches,
through its embedding model (priced from the price table). Indexes are kept in .halo/stores
(one SQLite database per store) or in PostgreSQL (store: "postgres://...").

At a terminal a progress bar shows files, chunks and embedding batches, with the rate and the
time left; otherwise a plain line is printed as each phase starts and ends. --rebuild makes
an index again from nothing: after a STORE_CORRUPT error, or to drop what the files no longer
explain (it removes that store's database and nothing else). A store another process is
indexing is waited for.`,
		Example: `  # Refresh every store the .halo files in this folder declare
  halo index

  # Make the Handbook index again from nothing, and print what was done as JSON
  halo index Handbook --rebuild --json

  # The stores of one file, with the mock embeddings halo test uses
  halo index --file support.halo --mock`,
		ValidArgsFunction: complete.StoreNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Stores = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return indexRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&opts.Files, "file", "f", nil, "a .halo `FILE` (or folder) declaring the stores (repeatable; default: this folder)")
	fl.BoolVar(&opts.Rebuild, "rebuild", false, "remove each store's index and build it again from nothing")
	fl.BoolVar(&opts.JSON, "json", false, "print what each store holds and what was done, as JSON")
	fl.BoolVar(&opts.Mock, "mock", false, "build the mock indexes halo test and --mock runs use (mock embeddings, no key)")
	return cmd
}

// Result is the --json output.
type Result struct {
	Stores []store.Stats `json:"stores"`
}

func indexRun(ctx context.Context, opts *Options) error {
	f := opts.F
	paths := opts.Files
	if len(paths) == 0 {
		paths = []string{"."}
	}
	prog, _, err := providers.LoadProgram(f, paths, opts.Registry)
	if err != nil {
		return err
	}
	decls, err := selected(prog, opts.Stores)
	if err != nil {
		return err
	}
	pcfg, err := projconf.Read(f.Dir)
	if err != nil {
		return err
	}
	set := providers.Stores(f, f.Dir, opts.Mock)
	defer set.Close()
	res := Result{Stores: []store.Stats{}}
	var out io.Writer = termsafe.Writer(f.IO.Out)
	errOut := termsafe.Writer(f.IO.ErrOut)
	for _, td := range decls {
		d, err := declaration(f, td)
		if err != nil {
			return err
		}
		if opts.Rebuild {
			if err := remove(ctx, f, d, pcfg.Stores, opts.Mock); err != nil {
				return err
			}
		}
		st, err := set.Open(ctx, d)
		if err != nil {
			return err
		}
		// The bar is drawn with \r and an erase: it goes to the terminal as it is, and
		// what it shows of the store is made safe.
		p := newProgress(f.IO.ErrOut, termsafe.String(d.Name), f.IO.ErrTTY && !opts.JSON, f.Now)
		op := store.Op{Progress: p.report, Wait: p.waiting}
		stats, err := st.Refresh(ctx, op, false)
		p.done()
		if err != nil {
			return err
		}
		stats.Rebuilt = stats.Rebuilt || opts.Rebuild
		res.Stores = append(res.Stores, stats)
		if !opts.JSON {
			fmt.Fprintln(out, summary(stats))
			for _, s := range stats.Skipped {
				fmt.Fprintf(errOut, "  skipped %s: %s\n", s.Path, s.Reason)
			}
		}
	}
	if opts.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	if len(decls) == 0 {
		fmt.Fprintln(errOut, "no File or VectorStore is declared: nothing to index")
	}
	return nil
}

// selected returns the store declarations of prog that names names (all of them when names
// is empty), in source order. A name that is not a store is a usage error.
func selected(prog *lang.Program, names []string) ([]*lang.ToolDecl, error) {
	var all []*lang.ToolDecl
	byName := map[string]*lang.ToolDecl{}
	for _, d := range prog.Decls() {
		if td, ok := d.(*lang.ToolDecl); ok && store.IsStore(td.Provider.Name) {
			all = append(all, td)
			byName[td.Name.Name] = td
		}
	}
	if len(names) == 0 {
		return all, nil
	}
	var out []*lang.ToolDecl
	for _, n := range names {
		td, ok := byName[n]
		if !ok {
			have := make([]string, 0, len(byName))
			for k := range byName {
				have = append(have, k)
			}
			sort.Strings(have)
			if len(have) == 0 {
				return nil, cmdutil.FlagError("%s is not a store: the files declare no File or VectorStore", n)
			}
			return nil, cmdutil.FlagError("%s is not a store (the stores are %s)", n, strings.Join(have, ", "))
		}
		out = append(out, td)
	}
	return out, nil
}

// declaration evaluates td as a run opens it: Env.NAME from the environment; a {{template}},
// which only a run's inputs fill, is an error.
func declaration(f *cmdutil.Factory, td *lang.ToolDecl) (tool.Declaration, error) {
	d := tool.Declaration{Name: td.Name.Name, Provider: td.Provider.Name, Named: map[string]any{}, Dir: f.Dir, Getenv: f.Env.Lookup}
	env := lang.DeclEnv{Getenv: f.Env.Lookup}
	for _, a := range td.Args {
		v, err := lang.DeclValue(a.Value, env)
		if errors.Is(err, lang.ErrUnknown) {
			return d, errcode.Wrap(tool.CodeToolConfig, err, "%s: %v: halo index cannot fill it; run a pipeline to index this store", td.Name.Name, err)
		}
		if err != nil {
			return d, errcode.Wrap(tool.CodeToolConfig, err, "%s: %v", td.Name.Name, err)
		}
		if a.Name == nil {
			d.Args = append(d.Args, v)
		} else {
			d.Named[a.Name.Name] = v
		}
	}
	return d, nil
}

// remove removes a store's index (its SQLite database, or its PostgreSQL tables) for
// --rebuild, whatever it holds; nothing else is touched.
func remove(ctx context.Context, f *cmdutil.Factory, d tool.Declaration, projectStore string, mock bool) error {
	spec, probs := store.ParseSpec(d, false)
	if len(probs) > 0 {
		return tool.Errorf(tool.CodeToolConfig, "%s %s: %s", d.Provider, d.Name, probs[0])
	}
	where := spec.Store
	if where == "" {
		where = projectStore
	}
	if where != "" && !mock {
		return store.DropPostgres(ctx, where, spec.Name)
	}
	return store.RemoveDatabase(f.Dir, spec.Name, mock)
}

// summary is the line printed for each store.
func summary(s store.Stats) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d %s, %d chunks", s.Store, s.Files, plural(s.Files, "file", "files"), s.Chunks)
	if s.Docs > 0 {
		fmt.Fprintf(&b, ", %d added %s", s.Docs, plural(s.Docs, "text", "texts"))
	}
	fmt.Fprintf(&b, " in %s (%d indexed, %d unchanged, %d removed", s.Where, s.Indexed, s.Unchanged, s.Removed)
	if len(s.Skipped) > 0 {
		fmt.Fprintf(&b, ", %d skipped", len(s.Skipped))
	}
	b.WriteString(")")
	if s.Embedded > 0 {
		fmt.Fprintf(&b, "; embedded %d %s in %d %s, %d tokens, $%.6f", s.Embedded, plural(s.Embedded, "chunk", "chunks"),
			s.Batches, plural(s.Batches, "request", "requests"), s.Usage.InputTokens, s.Cost)
	}
	if s.Rebuilt {
		b.WriteString("; rebuilt")
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// A progress shows how one store's refresh goes: a bar redrawn in place at a terminal, a
// line at each phase's start and end otherwise.
type progress struct {
	w     io.Writer
	name  string
	tty   bool
	now   func() time.Time
	start time.Time

	mu    sync.Mutex
	last  store.Progress
	phase string
	drawn time.Time
	bar   bool
}

func newProgress(w io.Writer, name string, tty bool, now func() time.Time) *progress {
	if now == nil {
		now = time.Now
	}
	return &progress{w: w, name: name, tty: tty, now: now, start: now()}
}

func (p *progress) waiting() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.w, "%s: waiting for another process that is indexing it\n", p.name)
}

func (p *progress) report(pr store.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	newPhase := pr.Phase != p.phase
	p.last = pr
	if newPhase {
		p.phase = pr.Phase
		p.start = p.now()
	}
	if !p.tty {
		if newPhase {
			switch pr.Phase {
			case "scan":
				fmt.Fprintf(p.w, "%s: %d %s to check\n", p.name, pr.FilesTotal, plural(pr.FilesTotal, "file", "files"))
			case "embed":
				fmt.Fprintf(p.w, "%s: embedding in %d %s\n", p.name, pr.BatchesTotal, plural(pr.BatchesTotal, "batch", "batches"))
			}
		}
		return
	}
	if t := p.now(); newPhase || t.Sub(p.drawn) >= 100*time.Millisecond || pr.Files == pr.FilesTotal && pr.Phase == "index" || pr.Phase == "embed" && pr.Batches == pr.BatchesTotal {
		p.drawn = t
		p.draw()
	}
}

// draw writes the bar: the share done, files, bytes, chunks, batches, the rate and the time
// left.
func (p *progress) draw() {
	pr := p.last
	done, total, unit := pr.Files, pr.FilesTotal, "files"
	if pr.Phase == "embed" {
		done, total, unit = pr.Batches, pr.BatchesTotal, "batches"
	}
	const width = 24
	filled := 0
	if total > 0 {
		filled = width * done / total
	}
	line := fmt.Sprintf("%s [%s%s] %d/%d %s", p.name, strings.Repeat("#", filled), strings.Repeat("-", width-filled), done, total, unit)
	if pr.Phase == "index" {
		line += fmt.Sprintf(", %s, %d chunks", size(pr.Bytes), pr.Chunks)
	}
	if el := p.now().Sub(p.start).Seconds(); el > 0.2 && done > 0 {
		rate := float64(done) / el
		line += fmt.Sprintf(", %.1f %s/s", rate, unit)
		if left := total - done; left > 0 {
			line += fmt.Sprintf(", %s left", time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second))
		}
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	p.bar = true
}

func (p *progress) clear() {
	if p.bar {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.bar = false
	}
}

// done erases the bar, so the summary is printed on a clean line.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
