package runtime

import "context"

// A Trace receives the events of the runs started with a context that carries it, beside
// Config.OnEvent. A caller that starts several runs at once on one Runtime (an MCP server
// answering concurrent calls) tells their events apart this way, as net/http/httptrace does
// for requests.
type Trace struct {
	// OnEvent receives every event of the run, as Config.OnEvent does: from the goroutine
	// that made the event, one call at a time, before the run goes on.
	OnEvent func(Event)
}

type traceKey struct{}

// WithTrace returns ctx carrying t: Run and Resume called with it send the run's events to t.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// traced adds the Trace ctx carries, if any, to the run's event handlers.
func (rn *run) traced(ctx context.Context) {
	t, _ := ctx.Value(traceKey{}).(*Trace)
	if t == nil || t.OnEvent == nil {
		return
	}
	if cfg := rn.st.onEv; cfg != nil {
		rn.st.onEv = func(e Event) { cfg(e); t.OnEvent(e) }
		return
	}
	rn.st.onEv = t.OnEvent
}
