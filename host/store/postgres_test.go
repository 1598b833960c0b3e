package store

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestPostgresFileStore(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DB(t)
	dir := project(t, handbook)
	set := NewSet(Config{Dir: dir, Postgres: dsn})
	defer set.Close()
	st := openStore(t, set, fileDecl("Handbook", "docs/**/*.md"))
	stats, err := st.Refresh(ctx, Op{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Files != 3 || stats.Chunks < 5 || !strings.HasPrefix(stats.Where, "postgres://") || strings.Contains(stats.Where, "password") {
		t.Errorf("stats %+v", stats)
	}
	hits, err := st.Search(ctx, "how much can a run spend on model calls?", 2, Op{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Path != "docs/policies.md" || hits[0].Source != "docs/policies.md:5-7" || hits[0].Score <= 0 || hits[0].Score >= 1 {
		t.Fatalf("hits %+v", hits)
	}
	if hits, _ := st.Search(ctx, "installing", 1, Op{}); len(hits) != 1 || hits[0].Path != "docs/install.md" {
		t.Errorf("stemmed: %+v", hits)
	}
	if _, err := st.Search(ctx, `'a' & !b | :* <-> ) (`, 3, Op{}); err != nil {
		t.Errorf("tsquery syntax reached the server: %v", err)
	}
	writeFile(t, dir, "docs/install.md", "# Install\n\nUse the installer script; it verifies the signature.\n")
	os.Remove(filepath.Join(dir, "docs/deep/faq.md"))
	if hits, _ := st.Search(ctx, "signature", 1, Op{}); len(hits) != 1 || !strings.Contains(hits[0].Text, "installer") {
		t.Errorf("after a change: %+v", hits)
	}
	if c, _ := st.be.counts(ctx); c.files != 2 {
		t.Errorf("%d files after a removal", c.files)
	}
	// The declaration's store: wins over the project's, and nothing was written under
	// .halo/stores but the lock... which PostgreSQL does not need either.
	if _, err := os.Stat(filepath.Join(dir, ".halo")); !os.IsNotExist(err) {
		t.Errorf(".halo was made for a PostgreSQL store: %v", err)
	}
}

func TestPostgresVectorStore(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.VectorDB(t)
	dir := project(t, handbook)
	emb := MockEmbedder{Dimensions: 64}
	set := NewSet(Config{Dir: dir, Embedders: func(string) (model.Embedder, string, error) { return emb, "m", nil }})
	defer set.Close()
	d := vectorDecl("Notes", map[string]any{"from": "docs/**/*.md", "store": dsn})
	st := openStore(t, set, d)
	stats, err := st.Refresh(ctx, Op{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Embedded != stats.Chunks || stats.Chunks < 5 {
		t.Errorf("stats %+v", stats)
	}
	hits, err := st.Search(ctx, "MaxSpend stops a run", 2, Op{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Path != "docs/policies.md" || hits[0].Score <= hits[1].Score {
		t.Fatalf("hits %+v", hits)
	}
	if _, err := st.Add(ctx, []Doc{{ID: "n1", Text: "zebra giraffe savanna", Metadata: map[string]any{"k": "v"}}}, Op{}); err != nil {
		t.Fatal(err)
	}
	hits, _ = st.Search(ctx, "zebra giraffe savanna", 1, Op{})
	if len(hits) != 1 || hits[0].ID != "n1" || hits[0].Metadata["k"] != "v" {
		t.Fatalf("added: %+v", hits)
	}
	if n, _ := st.Delete(ctx, []string{"n1"}, Op{}); n != 1 {
		t.Errorf("deleted %d", n)
	}
	// The index is pgvector's HNSW.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var def string
	if err := conn.QueryRow(ctx, `SELECT indexdef FROM pg_indexes WHERE indexname = 'halo_store_notes_vec_idx'`).Scan(&def); err != nil || !strings.Contains(def, "hnsw") {
		t.Errorf("index %q: %v", def, err)
	}
	// Another length for the same model: refused.
	emb.Dimensions = 32
	set2 := NewSet(Config{Dir: dir, Embedders: func(string) (model.Embedder, string, error) { return emb, "m", nil }})
	defer set2.Close()
	st2 := openStore(t, set2, d)
	if _, err := st2.Add(ctx, []Doc{{ID: "x", Text: "y"}}, Op{}); errcode.Code(err) != CodeDimension {
		t.Errorf("add of another length: %v", err)
	}
}

// Foreign tables of the store's name are not taken for its index, and --rebuild (reset) makes
// it again.
func TestPostgresForeignTables(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DB(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE halo_store_f_meta (key text, value text); INSERT INTO halo_store_f_meta VALUES ('format', 'something-else')`); err != nil {
		t.Fatal(err)
	}
	dir := project(t, map[string]string{"a.md": "alpha"})
	set := NewSet(Config{Dir: dir, Postgres: dsn})
	defer set.Close()
	if _, err := set.Open(ctx, fileDecl("F", "*.md")); errcode.Code(err) != CodeCorrupt {
		t.Fatalf("err = %v", err)
	}
	if err := DropPostgres(ctx, dsn, "F"); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, set, fileDecl("F", "*.md"))
	if hits, err := st.Search(ctx, "alpha", 1, Op{}); err != nil || len(hits) != 1 {
		t.Errorf("%v %v", hits, err)
	}
}

// The HNSW index's recall@10 against an exact scan, on random vectors: reported, and held
// above a floor so a broken index (or a search that misses ef_search) fails.
func TestPostgresHNSWRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds an index of 2,000 vectors")
	}
	ctx := context.Background()
	dsn := pgtest.VectorDB(t)
	recall := hnswRecall(t, ctx, dsn, 2000, 64, 20)
	t.Logf("HNSW recall@10 over 2,000 vectors of 64 dimensions: %.3f", recall)
	if recall < 0.9 {
		t.Errorf("recall@10 = %.3f, want at least 0.9", recall)
	}
}

// hnswRecall fills a VectorStore in PostgreSQL with n random vectors of dim dimensions and
// returns the mean share of the exact top 10 that the index's search returns, over queries.
func hnswRecall(t testing.TB, ctx context.Context, dsn string, n, dim, queries int) float64 {
	h := newHNSWBench(t, ctx, dsn, n, dim, 0)
	defer h.set.Close()
	total := 0.0
	for q := 0; q < queries; q++ {
		total += h.recall(t, ctx, q)
	}
	return total / float64(queries)
}

// An hnswBench is a PostgreSQL VectorStore of random vectors, and the same vectors in memory
// for the exact answers.
type hnswBench struct {
	set    *Set
	st     *Store
	exact  *vectors
	byText map[string][]float32
	embed  *sync.Mutex // guards byText
	r      *rand.Rand
	dim    int
	// centers, when set, are what the vectors cluster around, as embeddings of texts on a
	// few topics do; without them the vectors are uniformly random, HNSW's worst case.
	centers [][]float32
}

func newHNSWBench(t testing.TB, ctx context.Context, dsn string, n, dim, clusters int) *hnswBench {
	h := &hnswBench{r: rand.New(rand.NewSource(7)), byText: map[string][]float32{}, exact: newVectors(dim), dim: dim}
	for c := 0; c < clusters; c++ {
		h.centers = append(h.centers, h.gauss(1))
	}
	docs := make([]Doc, n)
	for i := range docs {
		v := h.random()
		docs[i] = Doc{ID: "v" + strconv.Itoa(i), Text: "t" + strconv.Itoa(i)}
		h.byText[docs[i].Text] = v
		h.exact.put(int64(i), v)
	}
	var mu sync.Mutex
	emb := model.EmbedderFunc(func(ctx context.Context, req model.EmbedRequest) (model.EmbedResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		out := make([][]float32, len(req.Inputs))
		for i, t := range req.Inputs {
			out[i] = h.byText[t]
		}
		return model.EmbedResponse{Vectors: out}, nil
	})
	h.set = NewSet(Config{Dir: t.TempDir(), Embedders: func(string) (model.Embedder, string, error) { return emb, "m", nil }})
	h.st = openStore(t, h.set, vectorDecl("Recall", map[string]any{"store": dsn}))
	for i := 0; i < len(docs); i += MaxAddDocs {
		if _, err := h.st.Add(ctx, docs[i:min(i+MaxAddDocs, len(docs))], Op{}); err != nil {
			t.Fatal(err)
		}
	}
	h.embed = &mu
	return h
}

// random is a new vector: around a random center, or uniformly random.
func (h *hnswBench) random() []float32 {
	if len(h.centers) == 0 {
		return h.gauss(1)
	}
	v := h.gauss(0.5)
	c := h.centers[h.r.Intn(len(h.centers))]
	for j := range v {
		v[j] += c[j]
	}
	return v
}

func (h *hnswBench) gauss(sd float64) []float32 {
	v := make([]float32, h.dim)
	for j := range v {
		v[j] = float32(h.r.NormFloat64() * sd)
	}
	return v
}

// query makes query q (a random vector, text "q<q>") and returns its exact top 10.
func (h *hnswBench) query(q int) (string, map[string]bool) {
	text := "q" + strconv.Itoa(q)
	h.embed.Lock()
	query, ok := h.byText[text]
	if !ok {
		query = h.random()
		h.byText[text] = query
	}
	h.embed.Unlock()
	want := map[string]bool{}
	for _, s := range h.exact.search(normalized(query), 10) {
		want["v"+strconv.Itoa(int(s.id))] = true
	}
	return text, want
}

// recall searches for query q and returns the share of the exact top 10 the index found.
func (h *hnswBench) recall(t testing.TB, ctx context.Context, q int) float64 {
	text, want := h.query(q)
	return h.found(t, ctx, text, want)
}

func (h *hnswBench) found(t testing.TB, ctx context.Context, text string, want map[string]bool) float64 {
	hits, err := h.st.Search(ctx, text, 10, Op{})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, hit := range hits {
		if want[hit.ID] {
			found++
		}
	}
	return float64(found) / 10
}

// BenchmarkPostgresHNSW: top-10 searches of pgvector's HNSW index over 5,000 vectors of 1,536
// dimensions around 50 centers, as embeddings of texts on a few topics lie (Store.Search: the
// query's embedding is a map lookup here), with its recall@10 against an exact scan reported
// beside its speed, and the exact scan of the same vectors in memory as the floor. (Uniformly
// random vectors of that many dimensions are HNSW's worst case: every vector is about as far
// from a query as every other, and the index finds few of the ten.)
func BenchmarkPostgresHNSW(b *testing.B) {
	ctx := context.Background()
	dsn := pgtest.VectorDB(b)
	start := time.Now()
	h := newHNSWBench(b, ctx, dsn, 5000, 1536, 50)
	defer h.set.Close()
	b.Logf("5,000 vectors added and indexed in %v", time.Since(start).Round(time.Second))
	const queries = 50
	texts := make([]string, queries)
	wants := make([]map[string]bool, queries)
	for q := range texts {
		texts[q], wants[q] = h.query(q)
	}
	b.Run("hnsw", func(b *testing.B) {
		total := 0.0
		for i := 0; i < b.N; i++ {
			total += h.found(b, ctx, texts[i%queries], wants[i%queries])
		}
		b.ReportMetric(total/float64(b.N), "recall@10")
	})
	b.Run("exact-scan", func(b *testing.B) {
		q := normalized(h.random())
		for i := 0; i < b.N; i++ {
			h.exact.search(q, 10)
		}
	})
}
