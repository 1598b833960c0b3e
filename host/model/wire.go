package model

import (
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"sync"
)

// A Wire keeps one conversation encoded in one provider's wire format between its requests:
// each message is encoded once, the first time a request carries it, and every later request
// reuses those bytes; a request body is the bytes of its messages joined, with the model id,
// the tools (also encoded once) and the settings around them, and no encoder scans the
// conversation again. Without a Wire (Request.Wire nil) a request encodes its messages for
// itself, the same way.
//
// A Wire belongs to one conversation, used by one goroutine at a time: its Messages may only
// grow at the end between requests (the tool loop appends turns and notes). A request whose
// earlier messages differ in shape from what the Wire encoded (role, text length, calls,
// results, native form) is encoded afresh, so a caller that rewrites history gets correct
// bytes, only not cached ones. A Wire moves between providers the same way: the bytes are
// the adapter's own, and another adapter starts over.
type Wire struct {
	adapter string
	shapes  []shape
	parts   [][]byte

	tools      []byte
	toolsFirst *ToolDef
	toolsN     int
}

// A shape is what a Wire compares to tell that the message it encoded is still the one a
// request carries.
type shape struct {
	role                  Role
	text, calls, results  int
	native                *Native
	firstCall, firstReply string
}

func shapeOf(m Message) shape {
	s := shape{role: m.Role, text: len(m.Text), calls: len(m.ToolCalls), results: len(m.ToolResults), native: m.Native}
	if len(m.ToolCalls) > 0 {
		s.firstCall = m.ToolCalls[0].ID
	}
	if len(m.ToolResults) > 0 {
		s.firstReply = m.ToolResults[0].CallID
	}
	return s
}

// messages returns the wire bytes of each of msgs for adapter, encoding with enc only those
// w does not hold yet. w may be nil: then everything is encoded, and nothing kept.
func (w *Wire) messages(adapter string, msgs []Message, enc func(Message) ([]byte, error)) ([][]byte, error) {
	if w == nil {
		w = &Wire{}
	}
	if w.adapter != adapter {
		*w = Wire{adapter: adapter}
	}
	keep := min(len(w.parts), len(msgs))
	for i := 0; i < keep; i++ {
		if w.shapes[i] != shapeOf(msgs[i]) {
			keep = i
			break
		}
	}
	w.parts, w.shapes = w.parts[:keep], w.shapes[:keep]
	for _, m := range msgs[keep:] {
		b, err := enc(m)
		if err != nil {
			return nil, err
		}
		w.parts = append(w.parts, b)
		w.shapes = append(w.shapes, shapeOf(m))
	}
	return w.parts, nil
}

// toolBytes returns the encoded tools of a request, encoding them with enc once per Wire (the
// tool loop offers the same list to every request of a conversation; a list that grew or
// was replaced is encoded again).
func (w *Wire) toolBytes(tools []ToolDef, enc func([]ToolDef) ([]byte, error)) ([]byte, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	if w != nil && w.toolsFirst == &tools[0] && w.toolsN == len(tools) && w.tools != nil {
		return w.tools, nil
	}
	b, err := enc(tools)
	if err != nil {
		return nil, err
	}
	if w != nil {
		w.tools, w.toolsFirst, w.toolsN = b, &tools[0], len(tools)
	}
	return b, nil
}

// A toolCache keeps each tool definition's wire bytes for one adapter, across conversations:
// the methods built-in tools and packages offer are the same values, schemas included, run
// after run, so each is encoded once per process. A definition is known by its name,
// description and the schema's bytes (the slice itself: schemas are not changed in place).
// It keeps at most maxCachedTools definitions; past that they are encoded each time.
type toolCache struct {
	mu sync.Mutex
	m  map[toolKey][]byte
	// The last whole list encoded, and its definitions' keys: a run after run offering the
	// same tools is sent the same bytes, not a new copy of each definition's.
	lastKeys  []toolKey
	lastFrame string // open and end of the last list
	last      []byte
}

type toolKey struct {
	name, desc string
	params     *byte
	n          int
}

const maxCachedTools = 4096

func newToolCache() *toolCache { return &toolCache{m: map[toolKey][]byte{}} }

// list returns an encoder of a whole tool list for Wire.toolBytes: open, each definition as
// one encodes it (from the cache when it was encoded before) joined by commas, then end.
func (c *toolCache) list(open, end string, one func(ToolDef) ([]byte, error)) func([]ToolDef) ([]byte, error) {
	return func(defs []ToolDef) ([]byte, error) {
		keys := make([]toolKey, len(defs))
		for i, t := range defs {
			keys[i] = toolKey{name: t.Name, desc: t.Description, n: len(t.Params)}
			if len(t.Params) > 0 {
				keys[i].params = &t.Params[0]
			}
		}
		frame := open + "\x00" + end
		c.mu.Lock()
		if c.last != nil && c.lastFrame == frame && slices.Equal(c.lastKeys, keys) {
			last := c.last
			c.mu.Unlock()
			return last, nil
		}
		c.mu.Unlock()
		out := append(make([]byte, 0, 256*len(defs)), open...)
		for i, t := range defs {
			k := keys[i]
			c.mu.Lock()
			b, ok := c.m[k]
			c.mu.Unlock()
			if !ok {
				var err error
				if b, err = one(t); err != nil {
					return nil, err
				}
				c.mu.Lock()
				if len(c.m) < maxCachedTools {
					c.m[k] = b
				}
				c.mu.Unlock()
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, b...)
		}
		out = append(out, end...)
		c.mu.Lock()
		c.lastKeys, c.lastFrame, c.last = keys, frame, out
		c.mu.Unlock()
		return out, nil
	}
}

// A body is a request body as the pieces it is made of, in order: sent as they are, without
// being copied into one buffer first.
type body [][]byte

// add appends pieces; empty ones are dropped.
func (b *body) add(pieces ...[]byte) {
	for _, p := range pieces {
		if len(p) > 0 {
			*b = append(*b, p)
		}
	}
}

// str appends a literal piece.
func (b *body) str(s string) { b.add([]byte(s)) }

// join appends parts separated by commas, skipping empty ones.
func (b *body) join(parts [][]byte) {
	first := true
	for _, p := range parts {
		if len(p) == 0 {
			continue
		}
		if !first {
			b.add(comma)
		}
		b.add(p)
		first = false
	}
}

// chatStart appends the opening of a chat request, where the system prompt is the first
// message (OpenAI-compatible, Ollama): {"model":model,"messages":[system, parts...]. system
// nil means none.
func (b *body) chatStart(model string, system []byte, parts [][]byte) {
	b.str(`{"model":`)
	b.add(quote(model))
	b.str(`,"messages":[`)
	if system != nil {
		b.add(system)
		if hasBytes(parts) {
			b.add(comma)
		}
	}
	b.join(parts)
	b.str("]")
}

// field appends ,"name":value (or "name":value first in an object, when first).
func (b *body) field(name string, value []byte) {
	b.str(`,"` + name + `":`)
	b.add(value)
}

var comma = []byte(",")

// len is the body's length in bytes.
func (b body) len() int64 {
	n := 0
	for _, p := range b {
		n += len(p)
	}
	return int64(n)
}

// bytes joins the pieces (for SDKs that take a body as one slice, and for tests).
func (b body) bytes() []byte {
	out := make([]byte, 0, b.len())
	for _, p := range b {
		out = append(out, p...)
	}
	return out
}

// reader reads the pieces in order.
func (b body) reader() io.Reader {
	bufs := make([][]byte, len(b))
	copy(bufs, b)
	return &piecesReader{bufs: bufs}
}

type piecesReader struct{ bufs [][]byte }

func (r *piecesReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.bufs) > 0 {
		c := copy(p[n:], r.bufs[0])
		n += c
		if c == len(r.bufs[0]) {
			r.bufs = r.bufs[1:]
		} else {
			r.bufs[0] = r.bufs[0][c:]
		}
	}
	if n == 0 && len(r.bufs) == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// WriteTo writes the pieces straight to w (net/http's transport writes a body this way when it
// can), without copying them through a buffer.
func (r *piecesReader) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for len(r.bufs) > 0 {
		m, err := w.Write(r.bufs[0])
		n += int64(m)
		if err != nil {
			r.bufs[0] = r.bufs[0][m:]
			return n, err
		}
		r.bufs = r.bufs[1:]
	}
	return n, nil
}

// quote returns s as a JSON string, as encoding/json writes it.
func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// hasBytes reports whether any of parts is not empty.
func hasBytes(parts [][]byte) bool {
	for _, p := range parts {
		if len(p) > 0 {
			return true
		}
	}
	return false
}

// joinEncoded encodes n values with enc and joins them with commas: the wire bytes of a
// message that is several elements of the provider's list.
func joinEncoded(n int, enc func(i int) ([]byte, error)) ([]byte, error) {
	if n == 1 {
		return enc(0)
	}
	var out []byte
	for i := 0; i < n; i++ {
		b, err := enc(i)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	return out, nil
}

// userTurns appends the messages of a provider that wants consecutive user content in one
// turn (Anthropic, Gemini): the parts of user and tool messages in a row are joined into one
// message that opens with open and closes with end; an assistant message's part is a whole
// message of its own.
func userTurns(b *body, parts [][]byte, msgs []Message, open, end string) {
	inTurn, filled, wrote := false, false, false
	for k, part := range parts {
		user := msgs[k].Role != Assistant
		if user && inTurn {
			if len(part) > 0 {
				if filled {
					b.add(comma)
				}
				b.add(part)
				filled = true
			}
			continue
		}
		if inTurn {
			b.str(end)
			inTurn = false
		}
		if wrote {
			b.add(comma)
		}
		wrote = true
		if user {
			b.str(open)
			b.add(part)
			inTurn, filled = true, len(part) > 0
			continue
		}
		b.add(part)
	}
	if inTurn {
		b.str(end)
	}
}

// encode is json.Marshal of one element of a body, in one pass: a value that encodes itself
// (the SDKs' messages and blocks) is asked for its bytes directly, which json.Marshal would
// ask for too and then scan once more to compact (they are compact already).
func encode(v any) ([]byte, error) {
	if m, ok := v.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(v)
}

// itoa is a number piece.
func itoa(n int) []byte { return strconv.AppendInt(nil, int64(n), 10) }
