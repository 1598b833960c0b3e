package mcpserver

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	"halolang.dev/halo/host/tool"
)

// slowTool is a provider type, Slow, whose methods are described without opening anything:
// wait (read) blocks until its call is cancelled or released, poke (write) returns at once.
type slowTool struct {
	started   chan struct{}
	release   chan struct{}
	cancelled atomic.Int32
	running   atomic.Int32
	peak      atomic.Int32
	mu        sync.Mutex
}

func newSlow() *slowTool {
	return &slowTool{started: make(chan struct{}, 1000), release: make(chan struct{})}
}

var slowMethods = []tool.Method{
	{Name: "wait", Effect: tool.Read, Params: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}}}`)},
	{Name: "poke", Effect: tool.Write},
	{Name: "send", Effect: tool.External},
}

func (s *slowTool) registry(t testing.TB) *tool.Registry {
	reg := tool.NewRegistry()
	err := reg.Add(tool.Type{Name: "Slow", Kind: tool.KindBuiltin, Methods: slowMethods,
		Open: func(ctx context.Context, d tool.Declaration) (tool.Provider, error) { return s, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func (s *slowTool) Methods(ctx context.Context) ([]tool.Method, error) { return slowMethods, nil }
func (s *slowTool) Close() error                                       { return nil }

func (s *slowTool) Call(ctx context.Context, req tool.Request) (json.RawMessage, error) {
	if req.Method != "wait" {
		return json.RawMessage(`"done"`), nil
	}
	n := s.running.Add(1)
	defer s.running.Add(-1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			break
		}
	}
	s.started <- struct{}{}
	select {
	case <-ctx.Done():
		s.cancelled.Add(1)
		return nil, ctx.Err()
	case <-s.release:
		return req.Args, nil
	}
}
