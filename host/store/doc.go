// Package store owns Halo's stores, the tools that add what an agent should know to its
// prompt: File(...), full-text search over the files a glob names in the project folder, and
// VectorStore(...), semantic search over embeddings of those files or of texts a pipeline
// adds. It chunks files (at headings, paragraphs and a size limit, each chunk keeping its
// path and lines), keeps the index in step with the files (by size, time and hash), embeds
// through host/model's embedding adapters, and searches.
//
// An index lives in one SQLite database per store under .halo/stores/, through
// github.com/ncruces/go-sqlite3 (SQLite translated to Go, so releases stay CGO_ENABLED=0):
// FTS5 with BM25 ranking for File, and for VectorStore the vectors as float32 blobs that are
// held in memory and scanned exactly (see vector.go for why not sqlite-vec). Declared with
// store: "postgres://...", the index is in PostgreSQL instead: tsvector ranking for File,
// pgvector's HNSW index for VectorStore.
//
// host/runtime opens stores through a Set (one per process, shared by its runs), searches
// them for every agent call whose agent equips one, and serves their search, add and delete
// methods as a tool; cmd/halo's index command builds them ahead of time. Every embedding
// request goes through the caller's Meter, so the runtime prices it and holds it to MaxSpend
// like a model call.
package store
