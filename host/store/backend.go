package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// A backend keeps one store's index: SQLite under .halo/stores or PostgreSQL. Every write
// happens with the lock held (lock), and bumps the index's generation, so a process that
// holds vectors in memory knows when another one changed them.
type backend interface {
	// where says where the index is, for people.
	where() string
	// lock takes the store's write lock, telling wait once if another process holds it.
	lock(ctx context.Context, wait func()) (unlock func(), err error)
	meta(ctx context.Context) (indexMeta, error)
	setMeta(ctx context.Context, m indexMeta) error
	// forgetFiles drops every file and its chunks (the chunking changed), keeping added
	// texts; dropVectors forgets every vector (the embedding model changed).
	forgetFiles(ctx context.Context) error
	dropVectors(ctx context.Context) error
	// files returns the indexed files' states by path.
	files(ctx context.Context) (map[string]fileState, error)
	// writeFiles applies changes in one transaction and returns how many chunks it wrote.
	writeFiles(ctx context.Context, changes []fileChange) (int, error)
	// staleCount and stale are the texts without a vector.
	staleCount(ctx context.Context) (int, error)
	stale(ctx context.Context, limit int) ([]row, error)
	setVectors(ctx context.Context, ids []int64, vecs [][]float32) error
	putDocs(ctx context.Context, docs []Doc, vecs [][]float32) error
	deleteDocs(ctx context.Context, ids []string) (int, error)
	searchText(ctx context.Context, query string, k int) ([]Hit, error)
	searchVector(ctx context.Context, vec []float32, k int) ([]Hit, error)
	counts(ctx context.Context) (counts, error)
	// reset empties the index, as if it had never been built.
	reset(ctx context.Context) error
	close() error
}

// indexMeta is what an index records about how it was built.
type indexMeta struct {
	// chunking is Spec.fingerprint; embedding the model vectors come from; dims their length
	// (0 until the first vector).
	chunking, embedding string
	dims                int
}

// A fileChange is one file to write: its new chunks, or only its new time (touch), or its
// removal.
type fileChange struct {
	path   string
	state  fileState
	chunks []chunk
	remove bool
	touch  bool
}

// A row is a text waiting for its vector.
type row struct {
	id          int64
	title, text string
}

// embedText is what is embedded of a chunk: its headings, then its text.
func (r row) embedText() string {
	if r.title != "" {
		return r.title + "\n\n" + r.text
	}
	return r.text
}

type counts struct{ files, chunks, docs int }

// Keys of the rows: a file's chunks "f:<path>#<n>", an added text "d:<id>", so no id a
// pipeline picks can take a chunk's place.
func fileKey(path string, n int) string { return "f:" + path + "#" + strconv.Itoa(n) }
func docKey(id string) string           { return "d:" + id }

// hitOf fills a hit's id and source from its row.
func hitOf(key, path string, start, end int, title, text string, score float64, metadata []byte) Hit {
	h := Hit{Title: title, Text: text, Score: score}
	if id, ok := strings.CutPrefix(key, "d:"); ok {
		h.ID, h.Source = id, id
	} else {
		h.Path, h.Start, h.End = path, start, end
		h.ID = path + ":" + strconv.Itoa(start) + "-" + strconv.Itoa(end)
		h.Source = h.ID
		if start == end {
			h.Source = path + ":" + strconv.Itoa(start)
		}
	}
	if len(metadata) > 0 {
		var m map[string]any
		if json.Unmarshal(metadata, &m) == nil {
			h.Metadata = m
		}
	}
	return h
}

// rankScore maps a text rank (higher better, from 0) into [0, 1).
func rankScore(r float64) float64 {
	if r <= 0 || math.IsNaN(r) {
		return 0
	}
	return r / (r + 1)
}

// encodeVector is a vector as its blob: little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// decodeVector reads a blob into dst (len(b)/4 floats), false when it is not whole floats.
func decodeVector(b []byte, dst []float32) bool {
	if len(b) != 4*len(dst) {
		return false
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return true
}

// stopWords are left out of text queries: words nearly every chunk has rank nothing and
// make a query read every row.
var stopWords = wordSet(`a an and are as at be but by can do does for from how i if in into is it its
	me my of on or our so that the their them then there these they this to was we were what when where which
	who why will with you your`)

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// maxQueryTerms bounds the words of a text query.
const maxQueryTerms = 32

// queryTerms are the words of a text query: letters and digits, lower-cased, without stop
// words and repeats, at most maxQueryTerms.
func queryTerms(q string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if stopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == maxQueryTerms {
			break
		}
	}
	return out
}
