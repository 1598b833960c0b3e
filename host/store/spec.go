package store

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/tool"
)

// The provider type names a declaration writes after the colon.
const (
	// File is `tool Handbook : File("docs/**/*.md")`.
	File = "File"
	// VectorStore is `tool Notes : VectorStore(embed: "openai/text-embedding-3-small")`.
	VectorStore = "VectorStore"
)

// IsStore reports whether provider names a store type.
func IsStore(provider string) bool { return provider == File || provider == VectorStore }

// Defaults and bounds of a declaration's options.
const (
	DefaultChunkChars   = 1500
	DefaultOverlap      = 150
	DefaultTopK         = 4
	MaxTopK             = 50
	DefaultMaxFileBytes = 4 << 20
	MaxFileBytesLimit   = 64 << 20
	minChunkChars       = 200
	maxChunkChars       = 20000
	// DefaultMockDimensions is the length of mock embeddings when dimensions: is not given.
	DefaultMockDimensions = 256
	maxDimensions         = 16000
)

// Limits on what one call may hand a store: a query or an add over them is a TOOL_LIMIT
// error, before anything is embedded or written.
const (
	MaxQueryBytes    = 8 << 10
	MaxAddTextBytes  = 32 << 10
	MaxMetadataBytes = 16 << 10
	MaxIDBytes       = 256
	MaxAddDocs       = 1000
)

// A Spec is a store declaration's options, read and checked.
type Spec struct {
	// Name is the declared tool name; Kind is File or VectorStore.
	Name, Kind string
	// Globs are the files the store reads (File's positional arguments, VectorStore's from:).
	Globs []string
	// Embed is VectorStore's embedding model, "provider/model".
	Embed string
	// Dimensions asks the model for vectors of this length; 0 means its own.
	Dimensions int
	// ChunkChars and Overlap size the chunks, in bytes.
	ChunkChars, Overlap int
	// TopK is how many hits an agent call gets; MinScore (when HasMinScore) drops weaker ones.
	TopK        int
	MinScore    float64
	HasMinScore bool
	// Store is where the index lives: "" for SQLite under .halo/stores, or a postgres:// URL.
	Store string
	// MaxFileBytes is the largest file read; larger ones are skipped and counted.
	MaxFileBytes int64

	globs []glob
	// patternOpt is the option problems with the patterns name: "from", or "" for File's
	// positional patterns.
	patternOpt string
}

// options lists what each type takes, for problems and for docs.
var options = map[string][]string{
	File:        {"from", "chunk_chars", "overlap", "top_k", "min_score", "store", "max_file_bytes"},
	VectorStore: {"embed", "from", "dimensions", "chunk_chars", "overlap", "top_k", "min_score", "store", "max_file_bytes"},
}

// ParseSpec reads a store declaration. Values not known before a run (nil: Env.NAME, a
// {{template}}) are taken as not given when check is true (halo validate), and refused
// otherwise. Every problem is returned, each naming its option ("" for the positional
// patterns).
func ParseSpec(d tool.Declaration, check bool) (Spec, []tool.Problem) {
	s := Spec{Name: d.Name, Kind: d.Provider, ChunkChars: DefaultChunkChars, Overlap: DefaultOverlap,
		TopK: DefaultTopK, MaxFileBytes: DefaultMaxFileBytes}
	var probs []tool.Problem
	bad := func(opt, format string, args ...any) {
		probs = append(probs, tool.Problem{Option: opt, Message: fmt.Sprintf(format, args...)})
	}
	known := options[d.Provider]
	names := make([]string, 0, len(d.Named))
	for k := range d.Named {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !contains(known, k) {
			bad(k, "unknown option %s (%s takes %s)", k, d.Provider, strings.Join(known, ", "))
		}
	}
	unknown := func(v any) bool { return v == nil && check }
	// The patterns: File's positional arguments (or from:), VectorStore's from:.
	var patterns []any
	s.patternOpt = "from"
	if d.Provider == File {
		patterns = d.Args
		if len(d.Args) > 0 {
			s.patternOpt = ""
		}
	} else if len(d.Args) > 0 {
		bad("", "VectorStore takes its options by name: embed: \"provider/model\", from: \"notes/**/*.md\"")
	}
	if from, ok := d.Named["from"]; ok {
		if d.Provider == File && len(d.Args) > 0 {
			bad("from", "give the patterns once: as File(\"a/*.md\", ...) or as from:")
		}
		switch x := from.(type) {
		case []any:
			patterns = append(patterns, x...)
		default:
			patterns = append(patterns, x)
		}
	}
	for _, p := range patterns {
		if unknown(p) {
			continue
		}
		str, ok := p.(string)
		if !ok {
			bad(s.patternOpt, "a pattern is a string such as \"docs/**/*.md\", not %s", describe(p))
			continue
		}
		g, err := parseGlob(str)
		if err != nil {
			bad(s.patternOpt, "%v", err)
			continue
		}
		s.Globs = append(s.Globs, str)
		s.globs = append(s.globs, g)
	}
	if d.Provider == File && len(patterns) == 0 {
		bad("", "File needs the files it reads: File(\"docs/**/*.md\")")
	}
	if d.Provider == VectorStore {
		switch v := d.Named["embed"].(type) {
		case string:
			if err := checkEmbed(v); err != nil {
				bad("embed", "%v", err)
			}
			s.Embed = v
		case nil:
			if _, given := d.Named["embed"]; !given {
				bad("embed", "VectorStore needs its embedding model: embed: \"openai/text-embedding-3-small\"")
			} else if !check {
				bad("embed", "no embedding model")
			}
		default:
			bad("embed", "embed: is a model such as \"openai/text-embedding-3-small\", not %s", describe(v))
		}
	}
	intOpt := func(name string, dest *int, lo, hi int) {
		v, ok := d.Named[name]
		if !ok || unknown(v) {
			return
		}
		f, isNum := v.(float64)
		if !isNum || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
			bad(name, "%s: is a whole number from %d to %d, not %s", name, lo, hi, describe(v))
			return
		}
		*dest = int(f)
	}
	intOpt("dimensions", &s.Dimensions, 1, maxDimensions)
	intOpt("chunk_chars", &s.ChunkChars, minChunkChars, maxChunkChars)
	intOpt("overlap", &s.Overlap, 0, maxChunkChars)
	intOpt("top_k", &s.TopK, 1, MaxTopK)
	var maxFile int
	intOpt("max_file_bytes", &maxFile, 1, MaxFileBytesLimit)
	if maxFile > 0 {
		s.MaxFileBytes = int64(maxFile)
	}
	if _, given := d.Named["overlap"]; !given {
		s.Overlap = min(DefaultOverlap, s.ChunkChars/10)
	}
	if s.Overlap > s.ChunkChars/4 {
		bad("overlap", "overlap: %d is more than a quarter of chunk_chars (%d)", s.Overlap, s.ChunkChars)
	}
	if v, ok := d.Named["min_score"]; ok && !unknown(v) {
		f, isNum := v.(float64)
		if !isNum || math.IsNaN(f) || f < -1 || f > 1 {
			bad("min_score", "min_score: is a number from -1 to 1 (scores are cosine similarities for VectorStore, ranks in [0, 1) for File), not %s", describe(v))
		} else {
			s.MinScore, s.HasMinScore = f, true
		}
	}
	if v, ok := d.Named["store"]; ok && !unknown(v) {
		str, isStr := v.(string)
		if !isStr || (str != "" && !isPostgres(str)) {
			bad("store", "store: is a postgres:// URL (or \"\" for the SQLite database under .halo/stores), not %s", describe(v))
		} else {
			s.Store = str
		}
	}
	return s, probs
}

// checkEmbed checks an embedding model reference: provider/model, a provider that has an
// embedding API.
func checkEmbed(ref string) error {
	p, _, err := model.Resolve(ref)
	if err != nil {
		return err
	}
	if !model.SupportsEmbeddings(p) {
		return fmt.Errorf("%s has no embedding API: use an openai, gemini, ollama, openrouter or together model", p)
	}
	return nil
}

func isPostgres(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// describe is a value as a problem quotes it.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case float64:
		return fmt.Sprint(x)
	case bool:
		return fmt.Sprint(x)
	case nil:
		return "null"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// fingerprint is what, when it changes, makes the chunks of every file stale: the chunking
// options, and for vectors the model and its length.
func (s Spec) fingerprint() string {
	return fmt.Sprintf("chunks=%d/%d", s.ChunkChars, s.Overlap)
}

// embedding names the model vectors come from, with its length when one was asked for.
func (s Spec) embedding() string {
	if s.Dimensions > 0 {
		return fmt.Sprintf("%s@%d", s.Embed, s.Dimensions)
	}
	return s.Embed
}
