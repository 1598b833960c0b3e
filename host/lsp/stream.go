package lsp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sourcegraph/jsonrpc2"
)

// MaxMessageBytes bounds one message a client sends: a message over it is read past and
// answered as invalid, never held whole.
const MaxMessageBytes = 64 << 20

// maxHeaderLine bounds one header line; maxHeaderLines the lines of one header.
const (
	maxHeaderLine  = 4096
	maxHeaderLines = 32
)

// The methods a message the guard could not pass on becomes: a request (it had an id) is
// answered with an error, a notification is logged.
const (
	methodInvalidRequest = "$/halo/invalidRequest"
	methodInvalidMessage = "$/halo/invalidMessage"
)

// A guard stands between the client's bytes and the JSON-RPC connection, which closes at the
// first message it cannot decode: the guard reads each message itself, within limits, and
// passes on only what decodes. A message that does not is passed on as a request the server
// answers with an error (when it had an id) or a notification the server logs, so a
// malformed message never ends the session. A header that cannot be read is skipped up to
// the next blank line.
type guard struct {
	in  *bufio.Reader
	out io.Writer
	// buf holds the message being handed to the connection.
	buf bytes.Buffer
}

func newGuard(in io.Reader, out io.Writer) *guard {
	return &guard{in: bufio.NewReaderSize(in, 64<<10), out: out}
}

func (g *guard) Write(p []byte) (int, error) { return g.out.Write(p) }

// Close ends nothing the guard owns: the streams are the caller's.
func (g *guard) Close() error { return nil }

func (g *guard) Read(p []byte) (int, error) {
	for g.buf.Len() == 0 {
		body, err := g.next()
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(&g.buf, "Content-Length: %d\r\n\r\n", len(body))
		g.buf.Write(body)
	}
	return g.buf.Read(p)
}

// next reads one message and returns what to hand on: the message itself, or its stand-in.
func (g *guard) next() ([]byte, error) {
	length, err := g.header()
	if err != nil {
		return nil, err
	}
	if length < 0 {
		return invalid(nil, "a message without a valid Content-Length header"), nil
	}
	if length > MaxMessageBytes {
		if _, err := io.CopyN(io.Discard, g.in, length); err != nil {
			return nil, err
		}
		return invalid(nil, fmt.Sprintf("a message of %d bytes; the most is %d", length, MaxMessageBytes)), nil
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(g.in, body); err != nil {
		return nil, err
	}
	if err := decodable(body); err != nil {
		return invalid(body, err.Error()), nil
	}
	return body, nil
}

// header reads header lines up to the blank line and returns the Content-Length, or -1 when
// there was none that could be read. A line over the limit, or too many lines, make the
// header unreadable; the rest of it is skipped.
func (g *guard) header() (int64, error) {
	length := int64(-1)
	bad := false
	for lines := 0; ; lines++ {
		line, err := g.line()
		if err != nil {
			return 0, err
		}
		if line == "" {
			if lines == 0 {
				continue // a stray line break between messages
			}
			break
		}
		if lines >= maxHeaderLines {
			bad = true
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || n < 0 {
				bad = true
				continue
			}
			length = n
		}
	}
	if bad {
		return -1, nil
	}
	return length, nil
}

// line reads one header line without its line break; a line over maxHeaderLine is read
// past and returned cut.
func (g *guard) line() (string, error) {
	var b []byte
	for {
		chunk, err := g.in.ReadSlice('\n')
		if len(b) < maxHeaderLine {
			b = append(b, chunk[:min(len(chunk), maxHeaderLine-len(b))]...)
		}
		switch {
		case err == nil:
			return strings.TrimRight(string(b), "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(b) > 0:
			return "", io.ErrUnexpectedEOF
		default:
			return "", err
		}
	}
}

// decodable reports why the connection could not decode body, as it decides: one JSON
// object, a request (with a method) or a response (with a result or an error) but not both,
// that decodes as one.
func decodable(body []byte) error {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&fields); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	_, hasMethod := fields["method"]
	_, hasResult := fields["result"]
	errField, hasError := fields["error"]
	hasError = hasError && string(errField) != "null"
	switch {
	case hasMethod && (hasResult || hasError), !hasMethod && !hasResult && !hasError:
		return errors.New("neither a request nor a response")
	case hasMethod:
		// What jsonrpc2.Request's decoding refuses, without decoding the params (a whole
		// document's text) again: a method that is not a string, an id that is neither a
		// string nor a whole number.
		var method string
		if err := json.Unmarshal(fields["method"], &method); err != nil {
			return fmt.Errorf("not a valid request: the method is not a string")
		}
		if id, ok := fields["id"]; ok && string(id) != "null" {
			var str string
			var num json.Number
			if json.Unmarshal(id, &str) != nil {
				if json.Unmarshal(id, &num) != nil {
					return errors.New("not a valid request: the id is neither a string nor a number")
				}
				if _, err := num.Int64(); err != nil {
					return fmt.Errorf("not a valid request: id %s: %v", num, err)
				}
			}
		}
	default:
		var r jsonrpc2.Response
		if err := json.Unmarshal(body, &r); err != nil {
			return fmt.Errorf("not a valid response: %v", err)
		}
	}
	if id, ok := fields["id"]; ok && string(id) != "null" && !hasMethod {
		var v jsonrpc2.ID
		if err := json.Unmarshal(id, &v); err != nil {
			return fmt.Errorf("not a valid id: %v", err)
		}
	}
	return nil
}

// invalid is the stand-in for a message that could not be passed on: a request with its id
// when one can be read from it (so the client gets its answer), else a notification.
func invalid(body []byte, why string) []byte {
	msg := map[string]any{"jsonrpc": "2.0", "params": map[string]string{"error": why}}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	var id jsonrpc2.ID
	if body != nil && json.Unmarshal(body, &probe) == nil && len(probe.ID) > 0 && json.Unmarshal(probe.ID, &id) == nil {
		msg["id"] = id
		msg["method"] = methodInvalidRequest
	} else {
		msg["method"] = methodInvalidMessage
	}
	b, _ := json.Marshal(msg)
	return b
}
