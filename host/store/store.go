package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/tool"
)

// Stable error codes of stores. Users match on them; never change or reuse one.
const (
	// CodeCorrupt: a store's database is not one Halo wrote here (a corrupt file, another
	// program's database, an index copied or planted from elsewhere). halo index --rebuild
	// makes it again.
	CodeCorrupt = "STORE_CORRUPT"
	// CodeDimension: the embedding model returned vectors of another length than the
	// store's, for the same model.
	CodeDimension = "STORE_DIMENSION"
)

// A Hit is one search result.
type Hit struct {
	// ID is the chunk's key: "path:start-end" for a file's chunk, the id given to add.
	ID string `json:"id"`
	// Source is what the prompt names the hit by: "docs/setup.md:12-30", or the id.
	Source string `json:"source"`
	// Path, Start and End are a file chunk's file and lines (from 1, both included).
	Path  string `json:"path,omitempty"`
	Start int    `json:"start,omitempty"`
	End   int    `json:"end,omitempty"`
	// Title is the path of headings above a file's chunk.
	Title string `json:"title,omitempty"`
	Text  string `json:"text"`
	// Score is the cosine similarity to the query (VectorStore), or the text rank mapped
	// into [0, 1) as r/(r+1) (File); higher is better.
	Score float64 `json:"score"`
	// Metadata is what add was given with the text.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// A Doc is one text a pipeline adds to a VectorStore.
type Doc struct {
	ID       string         `json:"id"`
	Text     string         `json:"text"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Stats are what a refresh did, and what the store holds after it.
type Stats struct {
	Store string `json:"store"`
	Kind  string `json:"kind"`
	// Files and Chunks are what the index holds; Docs the texts added by pipelines.
	Files  int `json:"files"`
	Chunks int `json:"chunks"`
	Docs   int `json:"docs,omitempty"`
	// Indexed, Unchanged and Removed count the files this refresh read and indexed, found
	// as they were, and dropped because they are gone.
	Indexed   int   `json:"indexed"`
	Unchanged int   `json:"unchanged"`
	Removed   int   `json:"removed"`
	Bytes     int64 `json:"bytes"`
	// Embedded counts the texts embedded, in Batches requests; Usage and Cost are theirs.
	Embedded int         `json:"embedded,omitempty"`
	Batches  int         `json:"batches,omitempty"`
	Usage    model.Usage `json:"usage"`
	Cost     float64     `json:"cost"`
	// Skipped are the files not indexed, with why.
	Skipped []Skipped `json:"skipped"`
	// Rebuilt says the index was made again from nothing (--rebuild, or a changed model).
	Rebuilt bool `json:"rebuilt,omitempty"`
	// Where is the database: a path under .halo/stores, or the PostgreSQL server.
	Where string `json:"where"`
}

// Progress is a report while a store is refreshed, for a progress bar.
type Progress struct {
	// Phase is "scan", "index" (reading and chunking files) or "embed".
	Phase string `json:"phase"`
	// Files of FilesTotal have been read; Bytes of them.
	Files, FilesTotal int
	Bytes             int64
	// Chunks have been written.
	Chunks int
	// Batches of BatchesTotal embedding requests have been sent.
	Batches, BatchesTotal int
}

// An Embedding is one embedding request a store is about to make.
type Embedding struct {
	// Store is the store's name; Model the embedding model as declared ("openai/...").
	Store, Model string
	// Mocked says the vectors come from MockEmbedder.
	Mocked  bool
	Request model.EmbedRequest
}

// A Meter sends one embedding request for whoever uses the store: the runtime prices it,
// holds it to MaxSpend, and records it as a call. send makes the request.
type Meter func(ctx context.Context, e Embedding, send func(context.Context, model.EmbedRequest) (model.EmbedResponse, error)) (model.EmbedResponse, error)

// Op is what one operation is done with.
type Op struct {
	// Meter sends the embedding requests; nil sends them as they are.
	Meter Meter
	// Progress, when not nil, is told how a refresh goes.
	Progress func(Progress)
	// Wait, when not nil, is told when the store is locked by another process and the
	// operation waits for it.
	Wait func()
}

// Config is what a Set opens stores with.
type Config struct {
	// Dir is the project folder (absolute): files are read under it, databases kept in its
	// .halo/stores.
	Dir string
	// Embedders opens an embedding model ("openai/text-embedding-3-small"); nil means
	// model.OpenEmbedder with Model.
	Embedders func(ref string) (model.Embedder, string, error)
	// Model is the model.Config embedders are opened with (keys, HTTP client, retries).
	Model model.Config
	// Postgres is the project's default store: (halo.json's "store"): "" for SQLite, or a
	// postgres:// URL.
	Postgres string
	// Mock makes every embedding a MockEmbedder's, and keeps every index in a mock database
	// of its own (.halo/stores/<name>.mock.db, never PostgreSQL), so a mocked run needs no
	// key and no server and never touches the real index.
	Mock bool
	// Logger gets debug lines; nil means none.
	Logger hclog.Logger
}

// A Set holds the stores one process opened, shared by its runs: a store is opened (its
// database, its vectors loaded) once. It is safe for concurrent use; Close closes them all.
type Set struct {
	cfg    Config
	mu     sync.Mutex
	stores map[string]*Store
	closed bool
}

// NewSet returns an empty set.
func NewSet(cfg Config) *Set {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Set{cfg: cfg, stores: map[string]*Store{}}
}

// Mock reports whether the set's stores embed with MockEmbedder.
func (s *Set) Mock() bool { return s.cfg.Mock }

// Open returns the store of declaration d, opening it on first use. A second declaration
// of the same name with other options is opened anew (a program reloaded by halo serve).
func (s *Set) Open(ctx context.Context, d tool.Declaration) (*Store, error) {
	spec, probs := ParseSpec(d, false)
	if len(probs) > 0 {
		msgs := make([]string, len(probs))
		for i, p := range probs {
			msgs[i] = p.String()
		}
		return nil, tool.Errorf(tool.CodeToolConfig, "%s %s: %s", d.Provider, d.Name, strings.Join(msgs, "; "))
	}
	if spec.Store == "" {
		spec.Store = s.cfg.Postgres
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("store %s: the set is closed", d.Name)
	}
	key := spec.Name
	if st, ok := s.stores[key]; ok {
		if st.spec.same(spec) {
			return st, nil
		}
		st.Close()
		delete(s.stores, key)
	}
	st, err := s.open(ctx, spec)
	if err != nil {
		return nil, err
	}
	s.stores[key] = st
	return st, nil
}

func (s *Set) open(ctx context.Context, spec Spec) (*Store, error) {
	st := &Store{spec: spec, cfg: s.cfg}
	if spec.Kind == VectorStore {
		if s.cfg.Mock {
			st.emb, st.embID = MockEmbedder{Dimensions: spec.Dimensions}, "mock"
		} else {
			open := s.cfg.Embedders
			if open == nil {
				mc := s.cfg.Model
				open = func(ref string) (model.Embedder, string, error) { return model.OpenEmbedder(ref, mc) }
			}
			var err error
			if st.emb, st.embID, err = open(spec.Embed); err != nil {
				return nil, fmt.Errorf("store %s: %w", spec.Name, err)
			}
		}
	}
	root, err := os.OpenRoot(s.cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("store %s: the project folder: %w", spec.Name, err)
	}
	st.root = root
	if len(spec.globs) > 0 {
		st.watch = newWatcher()
	}
	if spec.Store != "" && !s.cfg.Mock {
		st.be, err = openPostgres(ctx, spec)
	} else {
		st.be, err = openSQLite(root, s.cfg.Dir, spec, s.cfg.Mock)
	}
	if err != nil {
		root.Close()
		return nil, err
	}
	return st, nil
}

// Close closes every store the set opened; the set opens no more.
func (s *Set) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, st := range s.stores {
		errs = append(errs, st.Close())
	}
	s.stores = map[string]*Store{}
	s.closed = true
	return errors.Join(errs...)
}

// same reports whether two specs open the same store the same way.
func (s Spec) same(o Spec) bool {
	return s.Kind == o.Kind && strings.Join(s.Globs, "\x00") == strings.Join(o.Globs, "\x00") && s.Embed == o.Embed &&
		s.Dimensions == o.Dimensions && s.ChunkChars == o.ChunkChars && s.Overlap == o.Overlap && s.Store == o.Store &&
		s.MaxFileBytes == o.MaxFileBytes && s.TopK == o.TopK && s.MinScore == o.MinScore && s.HasMinScore == o.HasMinScore
}

// A Store is one opened store. It is safe for concurrent use: searches run side by side,
// refreshes and writes one at a time (in this process by a mutex, between processes by the
// database's lock).
type Store struct {
	spec  Spec
	cfg   Config
	root  *os.Root
	be    backend
	emb   model.Embedder
	embID string
	// write is held by whoever refreshes or writes.
	write sync.Mutex
	// ready is set once the embedding model has been checked against the index.
	ready atomic.Bool
	// seen holds the size and time of every file the patterns matched at the last refresh
	// (the ones skipped too), so a search can tell that nothing changed without reading the
	// index; linked are those of them a watch on their folder may not see change (links,
	// files with other names).
	seenMu sync.Mutex
	seen   map[string]fileState
	linked []string
	// watch, when not nil, says that nothing changed in the folders the patterns read, so
	// a search need not look at every file (watch_linux.go).
	watch *watcher
}

// Spec returns the store's declaration, read.
func (st *Store) Spec() Spec { return st.spec }

// Where says where the store's index is.
func (st *Store) Where() string { return st.be.where() }

// Close closes the store's database.
func (st *Store) Close() error {
	st.watch.close()
	err := st.be.close()
	st.root.Close()
	return err
}

// Refresh brings the index in step with the files: new and changed files (by size and
// time, then hash) are read, chunked and indexed, removed ones dropped, and for a
// VectorStore every text without a vector is embedded. rebuild first empties the index.
func (st *Store) Refresh(ctx context.Context, op Op, rebuild bool) (Stats, error) {
	st.write.Lock()
	defer st.write.Unlock()
	unlock, err := st.be.lock(ctx, op.Wait)
	if err != nil {
		return Stats{}, err
	}
	defer unlock()
	stats := Stats{Store: st.spec.Name, Kind: st.spec.Kind, Where: st.be.where(), Skipped: []Skipped{}}
	if rebuild {
		if err := st.be.reset(ctx); err != nil {
			return stats, err
		}
		stats.Rebuilt = true
	}
	if err := st.prepare(ctx, &stats); err != nil {
		return stats, err
	}
	// Every change the watch reported until here is in what sync reads.
	gen := st.watch.mark()
	if err := st.sync(ctx, op, &stats); err != nil {
		return stats, err
	}
	if st.spec.Kind == VectorStore {
		if err := st.embedStale(ctx, op, &stats); err != nil {
			return stats, err
		}
	}
	c, err := st.be.counts(ctx)
	if err != nil {
		return stats, err
	}
	stats.Files, stats.Chunks, stats.Docs = c.files, c.chunks, c.docs
	st.watch.settle(gen)
	return stats, nil
}

// prepare checks the index's settings against the declaration's, under the write lock:
// changed chunking makes every file's chunks stale; a changed embedding model every vector.
func (st *Store) prepare(ctx context.Context, stats *Stats) error {
	m, err := st.be.meta(ctx)
	if err != nil {
		return err
	}
	changed := false
	if m.chunking != st.spec.fingerprint() {
		if m.chunking != "" {
			if err := st.be.forgetFiles(ctx); err != nil {
				return err
			}
		}
		m.chunking, changed = st.spec.fingerprint(), true
	}
	if st.spec.Kind == VectorStore && m.embedding != st.embedding() {
		if m.embedding != "" {
			if err := st.be.dropVectors(ctx); err != nil {
				return err
			}
			stats.Rebuilt = true
		}
		m.embedding, m.dims, changed = st.embedding(), 0, true
	}
	if changed {
		if err := st.be.setMeta(ctx, m); err != nil {
			return err
		}
	}
	st.ready.Store(true)
	return nil
}

// embedding is the model the index's vectors come from.
func (st *Store) embedding() string {
	if st.cfg.Mock {
		return "mock:" + st.spec.embedding()
	}
	return st.spec.embedding()
}

// sync reads the files that changed and writes their chunks.
func (st *Store) sync(ctx context.Context, op Op, stats *Stats) error {
	if len(st.spec.globs) == 0 {
		return nil
	}
	report := func(p Progress) {
		if op.Progress != nil {
			op.Progress(p)
		}
	}
	files, skipped, err := scanWatched(st.root, st.spec.globs, st.watch)
	if err != nil {
		return fmt.Errorf("store %s: %w", st.spec.Name, err)
	}
	stats.Skipped = append(stats.Skipped, skipped...)
	indexed, err := st.be.files(ctx)
	if err != nil {
		return err
	}
	report(Progress{Phase: "scan", FilesTotal: len(files)})
	seen := make(map[string]fileState, len(files))
	var linked []string
	for _, f := range files {
		seen[f.Path] = fileState{Size: f.Size, ModTime: f.ModTime}
		if f.Linked {
			linked = append(linked, f.Path)
		}
	}
	// Files are read, hashed and chunked on a goroutine of their own, a batch ahead of the
	// writer, so the two run side by side; only the writer touches the database.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan changeBatch, 1)
	var readErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(batches)
		readErr = st.readChanges(ctx, files, indexed, stats, batches)
	}()
	prog := Progress{Phase: "index", FilesTotal: len(files)}
	var writeErr error
	for b := range batches {
		if writeErr != nil {
			continue // drained, so the reader ends
		}
		if len(b.changes) > 0 {
			n, err := st.be.writeFiles(ctx, b.changes)
			if err != nil {
				writeErr = err
				cancel()
				continue
			}
			prog.Chunks += n
		}
		prog.Files, prog.Bytes = b.files, b.bytes
		report(prog)
	}
	wg.Wait()
	if writeErr != nil {
		return writeErr
	}
	if readErr != nil {
		return readErr
	}
	st.seenMu.Lock()
	st.seen, st.linked = seen, linked
	st.seenMu.Unlock()
	return nil
}

// A changeBatch is what one transaction writes, and how far the reading got with it.
type changeBatch struct {
	changes []fileChange
	files   int
	bytes   int64
}

// readChanges reads the files that changed since indexed, chunks them and sends them in
// batches of up to 8 MiB or 500 files, then the removed files; it counts into stats (which
// nothing else touches until it returns).
func (st *Store) readChanges(ctx context.Context, files []found, indexed map[string]fileState, stats *Stats, out chan<- changeBatch) error {
	ck := chunker{max: st.spec.ChunkChars, overlap: st.spec.Overlap}
	var b changeBatch
	var batchBytes int64
	send := func() error {
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		b.changes, batchBytes = nil, 0
		return nil
	}
	present := make(map[string]bool, len(files))
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		present[f.Path] = true
		old, had := indexed[f.Path]
		b.files++
		if had && old.Size == f.Size && old.ModTime == f.ModTime {
			stats.Unchanged++
			continue
		}
		text, state, reason := readText(st.root, f.Path, st.spec.MaxFileBytes)
		if reason != "" {
			stats.Skipped = append(stats.Skipped, Skipped{Path: f.Path, Reason: reason})
			if had {
				b.changes = append(b.changes, fileChange{path: f.Path, remove: true})
				stats.Removed++
			}
			continue
		}
		b.bytes += state.Size
		stats.Bytes += state.Size
		if had && string(old.Hash) == string(state.Hash) {
			// Touched, not changed: only its time is new.
			b.changes = append(b.changes, fileChange{path: f.Path, state: state, touch: true})
			stats.Unchanged++
			continue
		}
		b.changes = append(b.changes, fileChange{path: f.Path, state: state, chunks: ck.split(string(text))})
		batchBytes += state.Size
		stats.Indexed++
		if batchBytes >= 8<<20 || len(b.changes) >= 500 {
			if err := send(); err != nil {
				return err
			}
		}
	}
	for p := range indexed {
		if !present[p] {
			b.changes = append(b.changes, fileChange{path: p, remove: true})
			stats.Removed++
		}
	}
	return send()
}

// embedStale embeds every text that has no vector, in batches, each a request through the
// Meter, each batch's vectors written as it comes back.
func (st *Store) embedStale(ctx context.Context, op Op, stats *Stats) error {
	total, err := st.be.staleCount(ctx)
	if err != nil || total == 0 {
		return err
	}
	prog := Progress{Phase: "embed", BatchesTotal: (total + model.MaxEmbedInputs - 1) / model.MaxEmbedInputs}
	for {
		rows, err := st.be.stale(ctx, model.MaxEmbedInputs)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		texts := make([]string, len(rows))
		for i, r := range rows {
			texts[i] = r.embedText()
		}
		resp, err := st.embed(ctx, op, texts, model.EmbedDocument)
		if err != nil {
			return err
		}
		stats.Embedded += len(rows)
		stats.Batches++
		stats.Usage.InputTokens += resp.Usage.InputTokens
		stats.Cost += resp.Cost
		ids := make([]int64, len(rows))
		for i, r := range rows {
			ids[i] = r.id
		}
		if err := st.be.setVectors(ctx, ids, resp.Vectors); err != nil {
			return err
		}
		prog.Batches++
		if op.Progress != nil {
			op.Progress(prog)
		}
	}
}

// embed sends one embedding request through op's Meter, and checks the vectors' length
// against the index's.
func (st *Store) embed(ctx context.Context, op Op, texts []string, task model.EmbedTask) (model.EmbedResponse, error) {
	req := model.EmbedRequest{Model: st.embID, Inputs: texts, Dimensions: st.spec.Dimensions, Task: task}
	send := func(ctx context.Context, req model.EmbedRequest) (model.EmbedResponse, error) {
		return st.emb.Embed(ctx, req)
	}
	var resp model.EmbedResponse
	var err error
	if op.Meter != nil {
		resp, err = op.Meter(ctx, Embedding{Store: st.spec.Name, Model: st.spec.Embed, Mocked: st.cfg.Mock, Request: req}, send)
	} else {
		resp, err = send(ctx, req)
	}
	if err != nil {
		return resp, fmt.Errorf("store %s: embedding with %s: %w", st.spec.Name, st.spec.Embed, err)
	}
	if len(resp.Vectors) != len(texts) {
		return resp, errcode.New(model.CodeBadResponse, "store %s: %s returned %d vectors for %d texts", st.spec.Name, st.spec.Embed, len(resp.Vectors), len(texts))
	}
	return resp, nil
}

// Search returns the k texts that best answer query (k 0: the declaration's top_k), best
// first, without those under the declaration's min_score. The index is first brought in
// step with the files.
func (st *Store) Search(ctx context.Context, query string, k int, op Op) ([]Hit, error) {
	if len(query) > MaxQueryBytes {
		return nil, tool.LimitError("store %s: the query is %s, over the limit of %s", st.spec.Name, tool.Size(len(query)), tool.Size(MaxQueryBytes))
	}
	if k <= 0 {
		k = st.spec.TopK
	}
	if k > MaxTopK {
		return nil, tool.LimitError("store %s: k: %d is over the limit of %d", st.spec.Name, k, MaxTopK)
	}
	if err := st.freshen(ctx, op); err != nil {
		return nil, err
	}
	var hits []Hit
	var err error
	if st.spec.Kind == File {
		hits, err = st.be.searchText(ctx, query, k)
	} else {
		if strings.TrimSpace(query) == "" {
			return []Hit{}, nil
		}
		var resp model.EmbedResponse
		if resp, err = st.embed(ctx, op, []string{query}, model.EmbedQuery); err != nil {
			return nil, err
		}
		hits, err = st.be.searchVector(ctx, resp.Vectors[0], k)
	}
	if err != nil {
		return nil, err
	}
	out := hits[:0]
	for _, h := range hits {
		if !st.spec.HasMinScore || h.Score >= st.spec.MinScore {
			out = append(out, h)
		}
	}
	return out, nil
}

// freshen refreshes the index when the files changed since it was last indexed, or when it
// was never prepared in this process. A search that finds nothing to do takes no lock.
//
// Whether the files changed: when the watch is quiet (no event in the folders the patterns
// read since the index was last found in step with them), only the files a watch may not
// see change (links, files with other names) are looked at; otherwise every file the
// patterns match is, by size and time. Either way a change that ended before the search
// began is in the index before the search reads it.
func (st *Store) freshen(ctx context.Context, op Op) error {
	if st.ready.Load() && len(st.spec.globs) == 0 {
		return nil
	}
	if st.ready.Load() {
		if st.watch.quiet() && st.linksUnchanged() {
			if st.spec.Kind == File {
				return nil
			}
			n, err := st.be.staleCount(ctx)
			if err != nil || n == 0 {
				return err
			}
		} else {
			gen := st.watch.mark()
			stale, err := st.changed(ctx)
			if err != nil {
				return err
			}
			if !stale {
				st.watch.settle(gen)
				return nil
			}
		}
	}
	_, err := st.Refresh(ctx, op, false)
	return err
}

// linksUnchanged reports whether the files a watch may not see change have the size and
// time they had when indexed.
func (st *Store) linksUnchanged() bool {
	st.seenMu.Lock()
	seen, linked := st.seen, st.linked
	st.seenMu.Unlock()
	for _, p := range linked {
		fi, err := st.root.Stat(p)
		if err != nil || fi.Size() != seen[p].Size || fi.ModTime().UnixNano() != seen[p].ModTime {
			return false
		}
	}
	return true
}

// changed reports whether a file the store reads was added, removed or touched since it was
// indexed, or a VectorStore's text waits for its vector.
func (st *Store) changed(ctx context.Context) (bool, error) {
	files, _, err := scanWatched(st.root, st.spec.globs, st.watch)
	if err != nil {
		return false, err
	}
	st.seenMu.Lock()
	seen := st.seen
	st.seenMu.Unlock()
	if seen == nil || len(files) != len(seen) {
		return true, nil
	}
	for _, f := range files {
		old, ok := seen[f.Path]
		if !ok || old.Size != f.Size || old.ModTime != f.ModTime {
			return true, nil
		}
	}
	if st.spec.Kind == VectorStore {
		n, err := st.be.staleCount(ctx)
		return n > 0, err
	}
	return false, nil
}

// Add embeds docs and stores them (a VectorStore's add); a doc with an id the store holds
// replaces it. It returns how many were written.
func (st *Store) Add(ctx context.Context, docs []Doc, op Op) (int, error) {
	if st.spec.Kind != VectorStore {
		return 0, tool.Errorf(tool.CodeUnknownMethod, "%s is a File store: its texts are its files", st.spec.Name)
	}
	if len(docs) > MaxAddDocs {
		return 0, tool.LimitError("store %s: %d texts in one add, over the limit of %d", st.spec.Name, len(docs), MaxAddDocs)
	}
	for _, d := range docs {
		if err := checkDoc(st.spec.Name, d); err != nil {
			return 0, err
		}
	}
	st.write.Lock()
	defer st.write.Unlock()
	unlock, err := st.be.lock(ctx, op.Wait)
	if err != nil {
		return 0, err
	}
	defer unlock()
	if !st.ready.Load() {
		if err := st.prepare(ctx, &Stats{}); err != nil {
			return 0, err
		}
	}
	n := 0
	for start := 0; start < len(docs); start += model.MaxEmbedInputs {
		part := docs[start:min(start+model.MaxEmbedInputs, len(docs))]
		texts := make([]string, len(part))
		for i, d := range part {
			texts[i] = d.Text
		}
		resp, err := st.embed(ctx, op, texts, model.EmbedDocument)
		if err != nil {
			return n, err
		}
		if err := st.be.putDocs(ctx, part, resp.Vectors); err != nil {
			return n, err
		}
		n += len(part)
	}
	return n, nil
}

// checkDoc refuses a doc over the size limits (TOOL_LIMIT) or without an id or text.
func checkDoc(store string, d Doc) error {
	switch {
	case d.ID == "":
		return tool.Errorf(tool.CodeToolArgument, "store %s: add needs an id", store)
	case len(d.ID) > MaxIDBytes:
		return tool.LimitError("store %s: the id is %s, over the limit of %s", store, tool.Size(len(d.ID)), tool.Size(MaxIDBytes))
	case strings.TrimSpace(d.Text) == "":
		return tool.Errorf(tool.CodeToolArgument, "store %s: add needs a text (id %s has none)", store, d.ID)
	case len(d.Text) > MaxAddTextBytes:
		return tool.LimitError("store %s: the text of %s is %s, over the limit of %s", store, d.ID, tool.Size(len(d.Text)), tool.Size(MaxAddTextBytes))
	}
	if d.Metadata != nil {
		b, err := json.Marshal(d.Metadata)
		if err != nil {
			return tool.Errorf(tool.CodeToolArgument, "store %s: metadata of %s: %v", store, d.ID, err)
		}
		if len(b) > MaxMetadataBytes {
			return tool.LimitError("store %s: the metadata of %s is %s, over the limit of %s", store, d.ID, tool.Size(len(b)), tool.Size(MaxMetadataBytes))
		}
	}
	return nil
}

// Delete removes the texts added with these ids; it returns how many there were.
func (st *Store) Delete(ctx context.Context, ids []string, op Op) (int, error) {
	if st.spec.Kind != VectorStore {
		return 0, tool.Errorf(tool.CodeUnknownMethod, "%s is a File store: its texts are its files", st.spec.Name)
	}
	for _, id := range ids {
		if len(id) > MaxIDBytes {
			return 0, tool.LimitError("store %s: an id is %s, over the limit of %s", st.spec.Name, tool.Size(len(id)), tool.Size(MaxIDBytes))
		}
	}
	st.write.Lock()
	defer st.write.Unlock()
	unlock, err := st.be.lock(ctx, op.Wait)
	if err != nil {
		return 0, err
	}
	defer unlock()
	return st.be.deleteDocs(ctx, ids)
}

// lockPoll is how often a store locked by another process is tried again.
const lockPoll = 50 * time.Millisecond

// poll calls try until it takes the lock (true) or fails, every lockPoll, telling wait once
// when the first try finds the lock held; it gives up with ctx's error when ctx ends.
func poll(ctx context.Context, wait func(), try func() (bool, error)) error {
	for n := 0; ; n++ {
		ok, err := try()
		if ok || err != nil {
			return err
		}
		if n == 0 && wait != nil {
			wait()
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
