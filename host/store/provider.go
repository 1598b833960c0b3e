package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"

	"halolang.dev/halo/host/tool"
)

// The methods' argument schemas.
var (
	searchSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"what to look for, in words"},` +
		`"k":{"type":"integer","minimum":1,"maximum":50,"description":"how many results (default: the store's top_k)"}},` +
		`"required":["query"],"additionalProperties":false}`)
	addSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"text":{"type":"string","description":"the text to store"},` +
		`"id":{"type":"string","description":"its id: adding an id again replaces its text"},` +
		`"metadata":{"type":"object","description":"anything kept with the text and returned with it"}},` +
		`"required":["text","id"],"additionalProperties":false}`)
	deleteSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"id":{"type":"string","description":"the id given to add"}},` +
		`"required":["id"],"additionalProperties":false}`)
)

// Methods describes a store type's methods: search (effect read), which an agent may be
// offered, and for a VectorStore add and delete (effect write), which only a pipeline calls.
func Methods(kind string) []tool.Method {
	ms := []tool.Method{{Name: "search", Effect: tool.Read, Params: searchSchema,
		Description: "Search the store for the passages that best answer a query; each result has its source (file and lines, or id), its text and its score."}}
	if kind == VectorStore {
		ms = append(ms,
			tool.Method{Name: "add", Effect: tool.Write, Params: addSchema, PipelineOnly: true,
				Description: "Pipelines only: embed a text and store it under an id, with optional metadata."},
			tool.Method{Name: "delete", Effect: tool.Write, Params: deleteSchema, PipelineOnly: true,
				Description: "Pipelines only: remove the text stored under an id."})
	}
	return ms
}

// Tool serves a store's methods as a tool.Provider, every call done with op (its Meter
// prices the embeddings for the run). Closing it leaves the store open: the Set owns it.
func Tool(st *Store, op Op) tool.Provider { return &provider{st: st, op: op} }

type provider struct {
	st *Store
	op Op
}

func (p *provider) Methods(context.Context) ([]tool.Method, error) {
	return Methods(p.st.spec.Kind), nil
}

func (p *provider) Close() error { return nil }

func (p *provider) Call(ctx context.Context, req tool.Request) (json.RawMessage, error) {
	switch req.Method {
	case "search":
		var a struct {
			Query *string  `json:"query"`
			K     *float64 `json:"k"`
		}
		if err := decodeArgs(req.Args, &a); err != nil {
			return nil, err
		}
		if a.Query == nil {
			return nil, tool.Errorf(tool.CodeToolArgument, "search needs a query")
		}
		k := 0
		if a.K != nil {
			if *a.K != math.Trunc(*a.K) || *a.K < 1 {
				return nil, tool.Errorf(tool.CodeToolArgument, "search: k is a whole number, 1 or more")
			}
			if *a.K > MaxTopK {
				return nil, tool.LimitError("store %s: k: %v is over the limit of %d", p.st.spec.Name, *a.K, MaxTopK)
			}
			k = int(*a.K)
		}
		hits, err := p.st.Search(ctx, *a.Query, k, p.op)
		if err != nil {
			return nil, err
		}
		return json.Marshal(hits)
	case "add":
		if p.st.spec.Kind != VectorStore {
			break
		}
		var d Doc
		if err := decodeArgs(req.Args, &d); err != nil {
			return nil, err
		}
		if _, err := p.st.Add(ctx, []Doc{d}, p.op); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"added": 1, "id": d.ID})
	case "delete":
		if p.st.spec.Kind != VectorStore {
			break
		}
		var a struct {
			ID *string `json:"id"`
		}
		if err := decodeArgs(req.Args, &a); err != nil {
			return nil, err
		}
		if a.ID == nil {
			return nil, tool.Errorf(tool.CodeToolArgument, "delete needs an id")
		}
		n, err := p.st.Delete(ctx, []string{*a.ID}, p.op)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"deleted": n})
	}
	names := ""
	for i, m := range Methods(p.st.spec.Kind) {
		if i > 0 {
			names += ", "
		}
		names += m.Name
	}
	return nil, tool.Errorf(tool.CodeUnknownMethod, "%s has no method %s (it has: %s)", p.st.spec.Name, req.Method, names)
}

// decodeArgs decodes a call's arguments, refusing names the method does not take.
func decodeArgs(raw json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return tool.Errorf(tool.CodeToolArgument, "arguments: %v", err)
	}
	return nil
}

// Types returns the File and VectorStore provider types, opening declarations through set
// (with no Meter: callers that price embeddings open stores through the set themselves).
// Their Check reads the options, and warns of a pattern that matches no file in the
// project folder.
func Types(set *Set) []tool.Type {
	check := func(d tool.Declaration) []tool.Problem {
		spec, probs := ParseSpec(d, true)
		if len(probs) == 0 && set != nil && set.cfg.Dir != "" {
			probs = append(probs, set.emptyPatterns(spec)...)
		}
		return probs
	}
	open := func(ctx context.Context, d tool.Declaration) (tool.Provider, error) {
		if set == nil {
			return nil, tool.Errorf(tool.CodeToolConfig, "%s %s: no stores here", d.Provider, d.Name)
		}
		st, err := set.Open(ctx, d)
		if err != nil {
			return nil, err
		}
		return Tool(st, Op{}), nil
	}
	return []tool.Type{
		{Name: File, Kind: tool.KindBuiltin, Methods: Methods(File), Open: open, Check: check,
			Description: "Full-text search (BM25) over the project's files a glob names; agents that equip it get the best passages in their prompt."},
		{Name: VectorStore, Kind: tool.KindBuiltin, Methods: Methods(VectorStore), Open: open, Check: check,
			Description: "Semantic search over embeddings of files, or of texts a pipeline adds; agents that equip it get the nearest passages in their prompt."},
	}
}

// emptyPatterns warns of each pattern that matches no file.
func (s *Set) emptyPatterns(spec Spec) []tool.Problem {
	root, err := os.OpenRoot(s.cfg.Dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	var out []tool.Problem
	for _, g := range spec.globs {
		files, _, err := scan(root, []glob{g})
		if err == nil && len(files) == 0 {
			out = append(out, tool.Problem{Option: spec.patternOpt, Warning: true,
				Message: fmt.Sprintf("%q matches no file in the project folder", g.pattern)})
		}
	}
	return out
}

// Measure counts the files a store declaration's patterns match in the project folder dir,
// and their bytes, without reading them or writing anything: halo plan prices indexing them.
func Measure(dir string, d tool.Declaration) (files int, bytes int64, err error) {
	spec, probs := ParseSpec(d, true)
	if len(probs) > 0 {
		return 0, 0, fmt.Errorf("%s", probs[0])
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, 0, err
	}
	defer root.Close()
	found, _, err := scan(root, spec.globs)
	if err != nil {
		return 0, 0, err
	}
	for _, f := range found {
		if f.Size <= spec.MaxFileBytes {
			files++
			bytes += f.Size
		}
	}
	return files, bytes, nil
}
