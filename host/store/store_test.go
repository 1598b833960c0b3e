package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/tool"
)

// project makes a project folder with files (path → text).
func project(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, text := range files {
		writeFile(t, dir, p, text)
	}
	return dir
}

func writeFile(t *testing.T, dir, p, text string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileDecl(name string, globs ...any) tool.Declaration {
	return tool.Declaration{Name: name, Provider: File, Args: globs, Named: map[string]any{}}
}

func vectorDecl(name string, named map[string]any) tool.Declaration {
	if named["embed"] == nil {
		named["embed"] = "openai/text-embedding-3-small"
	}
	return tool.Declaration{Name: name, Provider: VectorStore, Named: named}
}

func openStore(t testing.TB, set *Set, d tool.Declaration) *Store {
	t.Helper()
	st, err := set.Open(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

var handbook = map[string]string{
	"docs/install.md": "# Install\n\nDownload the release archive and unpack it.\n\n## From source\n\nRun go build in the checkout.\n",
	"docs/policies.md": "# Policies\n\nA policy lists rules. Redact replaces personal data before a prompt leaves the host.\n\n" +
		"## Spending\n\nMaxSpend stops a run once its model calls cost more than the limit.\n",
	"docs/deep/faq.md": "# FAQ\n\nWhy does my agent not see the tools? Name them in tools:.\n",
	"docs/logo.png":    "\x89PNG\r\n\x1a\n\x00\x00binary",
	"src/main.go":      "package main // budget\n",
}

func TestFileStoreSearchesAndFollowsTheFiles(t *testing.T) {
	ctx := context.Background()
	dir := project(t, handbook)
	writeFile(t, dir, "docs/image.md", "not\x00text")
	set := NewSet(Config{Dir: dir})
	defer set.Close()
	st := openStore(t, set, fileDecl("Handbook", "docs/**/*.md"))

	stats, err := st.Refresh(ctx, Op{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Files != 3 || stats.Indexed != 3 || stats.Chunks < 5 {
		t.Errorf("stats %+v", stats)
	}
	if len(stats.Skipped) != 1 || stats.Skipped[0] != (Skipped{Path: "docs/image.md", Reason: SkipBinary}) {
		t.Errorf("skipped %+v", stats.Skipped)
	}
	if stats.Where != ".halo/stores/Handbook.db" {
		t.Errorf("where %s", stats.Where)
	}

	hits, err := st.Search(ctx, "how much can a run spend on model calls?", 2, Op{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Path != "docs/policies.md" || hits[0].Title != "Policies › Spending" {
		t.Fatalf("hits %+v", hits)
	}
	h := hits[0]
	if h.Source != "docs/policies.md:5-7" || h.Start != 5 || !strings.Contains(h.Text, "MaxSpend") || h.Score <= 0 || h.Score >= 1 {
		t.Errorf("hit %+v", h)
	}
	// Stemming: "installing" finds "Install".
	if hits, _ := st.Search(ctx, "installing", 1, Op{}); len(hits) != 1 || hits[0].Path != "docs/install.md" {
		t.Errorf("stemmed search %+v", hits)
	}
	// Words only: FTS5's syntax in a query is text, not an operator.
	if _, err := st.Search(ctx, `NEAR("a" OR) * ^ -- "unbalanced`, 3, Op{}); err != nil {
		t.Errorf("query syntax reached FTS5: %v", err)
	}

	// A changed file is found (size and time), a new one added, a removed one dropped,
	// before the next search.
	writeFile(t, dir, "docs/install.md", "# Install\n\nUse the installer script; it verifies the signature.\n")
	writeFile(t, dir, "docs/new.md", "# Telemetry\n\nTraces go to an OTLP collector.\n")
	os.Remove(filepath.Join(dir, "docs/deep/faq.md"))
	if hits, _ := st.Search(ctx, "signature verifies", 1, Op{}); len(hits) != 1 || !strings.Contains(hits[0].Text, "installer") {
		t.Errorf("after a change: %+v", hits)
	}
	if hits, _ := st.Search(ctx, "OTLP collector traces", 1, Op{}); len(hits) != 1 || hits[0].Path != "docs/new.md" {
		t.Errorf("new file: %+v", hits)
	}
	if hits, _ := st.Search(ctx, "agent tools", 5, Op{}); len(hits) > 0 && hits[0].Path == "docs/deep/faq.md" {
		t.Errorf("a removed file is still found: %+v", hits)
	}
	// A touched file with the same bytes is not indexed again.
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "docs/policies.md"), later, later)
	stats, err = st.Refresh(ctx, Op{}, false)
	if err != nil || stats.Indexed != 0 || stats.Unchanged != 3 || stats.Files != 3 {
		t.Errorf("after a touch: %+v %v", stats, err)
	}
	// Nothing in the project folder was written but .halo/stores.
	entries, _ := os.ReadDir(filepath.Join(dir, ".halo"))
	if len(entries) != 1 || entries[0].Name() != "stores" {
		t.Errorf(".halo holds %v", entries)
	}
	// A search with nothing changed does not refresh, the skipped binary file not
	// counting as a change.
	if changed, err := st.changed(ctx); changed || err != nil {
		t.Errorf("changed = %v, %v with nothing changed", changed, err)
	}
}

func TestFileStoreMinScoreAndTopK(t *testing.T) {
	dir := project(t, handbook)
	set := NewSet(Config{Dir: dir})
	defer set.Close()
	d := fileDecl("H", "docs/**/*.md")
	d.Named["top_k"] = float64(1)
	st := openStore(t, set, d)
	hits, err := st.Search(context.Background(), "policy rules redact spend", 0, Op{})
	if err != nil || len(hits) != 1 {
		t.Fatalf("top_k 1: %v %v", hits, err)
	}
	d2 := fileDecl("H2", "docs/**/*.md")
	d2.Named["min_score"] = 0.99
	st2 := openStore(t, set, d2)
	if hits, _ := st2.Search(context.Background(), "policy", 4, Op{}); len(hits) != 0 {
		t.Errorf("min_score 0.99 kept %+v", hits)
	}
}

func TestVectorStoreWithMockEmbeddings(t *testing.T) {
	ctx := context.Background()
	dir := project(t, handbook)
	set := NewSet(Config{Dir: dir, Mock: true})
	defer set.Close()
	st := openStore(t, set, vectorDecl("Notes", map[string]any{"from": "docs/**/*.md"}))
	var calls int
	var mu sync.Mutex
	op := Op{Meter: func(ctx context.Context, e Embedding, send func(context.Context, model.EmbedRequest) (model.EmbedResponse, error)) (model.EmbedResponse, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		if e.Store != "Notes" || e.Model != "openai/text-embedding-3-small" || !e.Mocked {
			t.Errorf("meter told %+v", e)
		}
		return send(ctx, e.Request)
	}}
	stats, err := st.Refresh(ctx, op, false)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Embedded != stats.Chunks || stats.Batches != 1 || calls != 1 || stats.Where != ".halo/stores/Notes.mock.db" {
		t.Errorf("stats %+v, meter called %d times", stats, calls)
	}
	hits, err := st.Search(ctx, "MaxSpend stops a run", 2, op)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Path != "docs/policies.md" || !strings.Contains(hits[0].Text, "MaxSpend") || hits[0].Score <= hits[1].Score {
		t.Fatalf("hits %+v", hits)
	}
	if calls != 2 {
		t.Errorf("the query's embedding did not go through the meter (%d calls)", calls)
	}

	// add, replace and delete, by id.
	if _, err := st.Add(ctx, []Doc{{ID: "n1", Text: "The quarterly budget review is on Friday.", Metadata: map[string]any{"author": "ana"}}}, op); err != nil {
		t.Fatal(err)
	}
	hits, _ = st.Search(ctx, "quarterly budget review", 1, op)
	if len(hits) != 1 || hits[0].ID != "n1" || hits[0].Source != "n1" || hits[0].Metadata["author"] != "ana" {
		t.Fatalf("added: %+v", hits)
	}
	st.Add(ctx, []Doc{{ID: "n1", Text: "Lunch menu: soup."}}, op)
	hits, _ = st.Search(ctx, "lunch soup", 1, op)
	if len(hits) != 1 || hits[0].ID != "n1" || hits[0].Text != "Lunch menu: soup." {
		t.Fatalf("replaced: %+v", hits)
	}
	if n, err := st.Delete(ctx, []string{"n1", "nope"}, op); n != 1 || err != nil {
		t.Errorf("delete: %d %v", n, err)
	}
	if hits, _ := st.Search(ctx, "lunch soup", 3, op); len(hits) > 0 && hits[0].ID == "n1" {
		t.Errorf("deleted text found: %+v", hits)
	}
	// A second process (another Set) sees what this one wrote.
	st.Add(ctx, []Doc{{ID: "shared", Text: "zebra giraffe savanna"}}, op)
	other := NewSet(Config{Dir: dir, Mock: true})
	defer other.Close()
	st2 := openStore(t, other, vectorDecl("Notes", map[string]any{"from": "docs/**/*.md"}))
	if hits, _ := st2.Search(ctx, "giraffe savanna zebra", 1, Op{}); len(hits) != 1 || hits[0].ID != "shared" {
		t.Errorf("other process: %+v", hits)
	}
	st2.Add(ctx, []Doc{{ID: "back", Text: "penguin iceberg"}}, Op{})
	if hits, _ := st.Search(ctx, "penguin iceberg", 1, op); len(hits) != 1 || hits[0].ID != "back" {
		t.Errorf("this process does not see the other's add: %+v", hits)
	}
}

func TestVectorStoreModelChangeRebuildsAndDimensionsAreChecked(t *testing.T) {
	ctx := context.Background()
	dir := project(t, map[string]string{"a.md": "alpha beta", "b.md": "gamma delta"})
	dims := 8
	embedder := model.EmbedderFunc(func(ctx context.Context, req model.EmbedRequest) (model.EmbedResponse, error) {
		return MockEmbedder{Dimensions: dims}.Embed(ctx, req)
	})
	cfg := Config{Dir: dir, Embedders: func(ref string) (model.Embedder, string, error) { return embedder, "m", nil }}
	set := NewSet(cfg)
	st := openStore(t, set, vectorDecl("V", map[string]any{"from": "*.md"}))
	if _, err := st.Refresh(ctx, Op{}, false); err != nil {
		t.Fatal(err)
	}
	// The model returns vectors of another length for the same model: refused.
	dims = 16
	_, err := st.Search(ctx, "alpha", 1, Op{})
	if errcode.Code(err) != CodeDimension || !strings.Contains(err.Error(), "16 dimensions") {
		t.Fatalf("err = %v", err)
	}
	_, err = st.Add(ctx, []Doc{{ID: "x", Text: "y"}}, Op{})
	if errcode.Code(err) != CodeDimension {
		t.Errorf("add: %v", err)
	}
	set.Close()
	// A changed model (or dimensions:) rebuilds the vectors.
	set = NewSet(cfg)
	defer set.Close()
	st = openStore(t, set, vectorDecl("V", map[string]any{"from": "*.md", "embed": "openai/text-embedding-3-large"}))
	stats, err := st.Refresh(ctx, Op{}, false)
	if err != nil || !stats.Rebuilt || stats.Embedded != 2 {
		t.Fatalf("after a model change: %+v %v", stats, err)
	}
	if hits, err := st.Search(ctx, "gamma", 1, Op{}); err != nil || len(hits) != 1 || hits[0].Path != "b.md" {
		t.Errorf("%+v %v", hits, err)
	}
}

func TestStoreLimits(t *testing.T) {
	ctx := context.Background()
	dir := project(t, map[string]string{"a.md": "x"})
	set := NewSet(Config{Dir: dir, Mock: true})
	defer set.Close()
	st := openStore(t, set, vectorDecl("V", map[string]any{}))
	p := Tool(st, Op{})
	for name, c := range map[string]struct {
		method, args, code string
	}{
		"long query":      {"search", `{"query": "` + strings.Repeat("q", MaxQueryBytes+1) + `"}`, tool.CodeLimit},
		"k over the max":  {"search", `{"query": "q", "k": 51}`, tool.CodeLimit},
		"k not whole":     {"search", `{"query": "q", "k": 1.5}`, tool.CodeToolArgument},
		"no query":        {"search", `{}`, tool.CodeToolArgument},
		"unknown arg":     {"search", `{"query": "q", "path": "/etc"}`, tool.CodeToolArgument},
		"long text":       {"add", `{"id": "a", "text": "` + strings.Repeat("t", MaxAddTextBytes+1) + `"}`, tool.CodeLimit},
		"long id":         {"add", `{"id": "` + strings.Repeat("i", MaxIDBytes+1) + `", "text": "t"}`, tool.CodeLimit},
		"big metadata":    {"add", `{"id": "a", "text": "t", "metadata": {"m": "` + strings.Repeat("m", MaxMetadataBytes) + `"}}`, tool.CodeLimit},
		"no id":           {"add", `{"text": "t"}`, tool.CodeToolArgument},
		"empty text":      {"add", `{"id": "a", "text": "  "}`, tool.CodeToolArgument},
		"unknown method":  {"drop", `{}`, tool.CodeUnknownMethod},
		"delete, long id": {"delete", `{"id": "` + strings.Repeat("i", MaxIDBytes+1) + `"}`, tool.CodeLimit},
	} {
		_, err := p.Call(ctx, tool.Request{Method: c.method, Args: []byte(c.args)})
		if errcode.Code(err) != c.code {
			t.Errorf("%s: %v (%s), want %s", name, err, errcode.Code(err), c.code)
		}
	}
	// A refused add wrote nothing.
	if c, _ := st.be.counts(ctx); c.docs != 0 {
		t.Errorf("%d docs after refused adds", c.docs)
	}
	fs := openStore(t, set, fileDecl("F", "*.md"))
	if _, err := Tool(fs, Op{}).Call(ctx, tool.Request{Method: "add", Args: []byte(`{"id": "a", "text": "t"}`)}); errcode.Code(err) != tool.CodeUnknownMethod {
		t.Errorf("add on a File store: %v", err)
	}
}

func TestParseSpec(t *testing.T) {
	for name, c := range map[string]struct {
		d    tool.Declaration
		want string // "" for no problem
	}{
		"file":              {fileDecl("F", "docs/**/*.md", "README.md"), ""},
		"file from":         {tool.Declaration{Name: "F", Provider: File, Named: map[string]any{"from": []any{"a/*.md"}}}, ""},
		"file no glob":      {fileDecl("F"), "File needs the files"},
		"file abs":          {fileDecl("F", "/etc/passwd"), "absolute"},
		"file dotdot":       {fileDecl("F", "../secrets/*"), "leaves the project"},
		"file number":       {fileDecl("F", 3.0), "a pattern is a string"},
		"unknown option":    {tool.Declaration{Name: "F", Provider: File, Args: []any{"*.md"}, Named: map[string]any{"embed": "x/y"}}, "unknown option embed"},
		"vector":            {vectorDecl("V", map[string]any{"from": "n/*.md", "dimensions": 256.0, "top_k": 8.0, "min_score": 0.2}), ""},
		"vector no embed":   {tool.Declaration{Name: "V", Provider: VectorStore, Named: map[string]any{}}, "needs its embedding model"},
		"vector anthropic":  {vectorDecl("V", map[string]any{"embed": "anthropic/claude-sonnet-4-5"}), "no embedding API"},
		"vector bad model":  {vectorDecl("V", map[string]any{"embed": "gpt"}), "want provider/model"},
		"vector positional": {tool.Declaration{Name: "V", Provider: VectorStore, Args: []any{"x"}, Named: map[string]any{"embed": "openai/m"}}, "by name"},
		"top_k big":         {vectorDecl("V", map[string]any{"top_k": 500.0}), "top_k: is a whole number from 1 to 50"},
		"chunk small":       {fileDecl2(map[string]any{"chunk_chars": 10.0}), "chunk_chars"},
		"overlap big":       {fileDecl2(map[string]any{"chunk_chars": 1000.0, "overlap": 600.0}), "quarter"},
		"min_score":         {fileDecl2(map[string]any{"min_score": 5.0}), "min_score"},
		"store":             {fileDecl2(map[string]any{"store": "mysql://x"}), "postgres://"},
		"store pg":          {fileDecl2(map[string]any{"store": "postgres://h/db"}), ""},
	} {
		_, probs := ParseSpec(c.d, true)
		var msgs []string
		for _, p := range probs {
			msgs = append(msgs, p.String())
		}
		got := strings.Join(msgs, "; ")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: problems %q, want %q", name, got, c.want)
		}
	}
	// Values not known before a run are not problems for halo validate, and are for a run.
	d := vectorDecl("V", map[string]any{"from": nil, "store": nil})
	d.Named["embed"] = nil
	if _, probs := ParseSpec(d, true); len(probs) != 0 {
		t.Errorf("check: %v", probs)
	}
	if _, probs := ParseSpec(d, false); len(probs) == 0 {
		t.Error("a run accepts an unknown embed")
	}
}

func fileDecl2(named map[string]any) tool.Declaration {
	return tool.Declaration{Name: "F", Provider: File, Args: []any{"*.md"}, Named: named}
}

func TestLockWaitsForAnotherProcess(t *testing.T) {
	dir := project(t, map[string]string{"a.md": "x"})
	set := NewSet(Config{Dir: dir})
	defer set.Close()
	st := openStore(t, set, fileDecl("F", "*.md"))
	other := NewSet(Config{Dir: dir})
	defer other.Close()
	st2 := openStore(t, other, fileDecl("F", "*.md"))
	unlock, err := st.be.lock(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := st2.Refresh(context.Background(), Op{Wait: func() { close(waited) }}, false)
		done <- err
	}()
	<-waited
	select {
	case err := <-done:
		t.Fatalf("refreshed while the lock was held: %v", err)
	case <-time.After(3 * lockPoll):
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A wait ends with its context.
	unlock, _ = st.be.lock(context.Background(), nil)
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*lockPoll)
	defer cancel()
	if _, err := st2.Refresh(ctx, Op{}, false); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
}

// Runs of halo serve share one store: searches side by side with adds, and with a file
// that changes under them.
func TestConcurrentSearchesAndWrites(t *testing.T) {
	ctx := context.Background()
	dir := project(t, handbook)
	set := NewSet(Config{Dir: dir, Mock: true})
	defer set.Close()
	vs := openStore(t, set, vectorDecl("V", map[string]any{"from": "docs/**/*.md"}))
	fs := openStore(t, set, fileDecl("F", "docs/**/*.md"))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 4; g++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if _, err := vs.Search(ctx, "MaxSpend policy", 3, Op{}); err != nil {
					errs <- err
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if _, err := fs.Search(ctx, "install release", 3, Op{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			if _, err := vs.Add(ctx, []Doc{{ID: "d" + strings.Repeat("x", i), Text: "concurrent text number"}}, Op{}); err != nil {
				errs <- err
			}
			writeFile(t, dir, "docs/install.md", "# Install\n\nVersion "+strings.Repeat("1", i+1)+"\n")
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if c, _ := vs.be.counts(ctx); c.docs != 10 {
		t.Errorf("%d docs", c.docs)
	}
}
