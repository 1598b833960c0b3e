package tool

import (
	"bytes"
	"fmt"
)

// Limits on what a provider may hand back. A tool's reply comes from code Halo did not write
// (an MCP server, a module package), and everything downstream (policies, events, run
// records, the model's context) holds it in memory, so its size and nesting are bounded where
// it enters the host.
const (
	// DefaultMaxResultBytes is the largest reply a provider may send when its declaration
	// does not say otherwise (max_result_bytes:): one MCP message, one plugin result.
	DefaultMaxResultBytes = 16 << 20
	// MaxDepth is how deeply a reply's JSON may nest objects and arrays.
	MaxDepth = 64
	// MaxResultOption is the declaration option that sets a provider's size limit, in bytes.
	MaxResultOption = "max_result_bytes"
)

// MaxResultBytesOf reads the max_result_bytes: option of a declaration's named arguments:
// DefaultMaxResultBytes when absent, an error for anything but a positive whole number.
// A nil value (known only at run time) is the default.
func MaxResultBytesOf(named map[string]any) (int, error) {
	v, ok := named[MaxResultOption]
	if !ok || v == nil {
		return DefaultMaxResultBytes, nil
	}
	f, ok := v.(float64)
	if !ok || f < 1 || f != float64(int64(f)) || f > 1<<40 {
		return 0, fmt.Errorf("%s: must be a positive whole number of bytes, such as 67108864 for 64 MiB", MaxResultOption)
	}
	return int(f), nil
}

// LimitError is a TOOL_LIMIT error: the reply went over a limit. It is not retryable, since
// the same call would get the same reply.
func LimitError(format string, args ...any) *Error {
	return &Error{Code: CodeLimit, Message: fmt.Sprintf(format, args...)}
}

// Size formats a byte count for messages: "16 MiB", "1500 bytes".
func Size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// CheckReply checks a provider's JSON reply against the size limit maxBytes (0: no size
// check) and MaxDepth. who names the provider in the message ("MCP tool Docs").
func CheckReply(who string, b []byte, maxBytes int) error {
	if maxBytes > 0 && len(b) > maxBytes {
		return LimitError("%s: the result is %s, over the limit of %s (%s: raises it)", who, Size(len(b)), Size(maxBytes), MaxResultOption)
	}
	if DepthExceeds(b, MaxDepth) {
		return LimitError("%s: the result nests objects and arrays more than %d deep", who, MaxDepth)
	}
	return nil
}

// DepthExceeds reports whether the JSON text b nests objects and arrays more than max deep.
// It looks at brackets outside strings only and does not otherwise check that b is JSON; it
// stops at the first bracket past max, and skips over strings with bytes.IndexByte, so a
// large text costs little.
func DepthExceeds(b []byte, max int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end := stringEnd(b, i)
			if end < 0 {
				return false
			}
			i = end
		case '{', '[':
			depth++
			if depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// stringEnd returns the index of the quote that closes the string whose opening quote is at
// b[start], or -1 when the string does not end.
func stringEnd(b []byte, start int) int {
	i := start + 1
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for k := i - 1; k > start && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return i
		}
		i++
	}
}

// TopLevelField returns the raw JSON value of field name in the JSON object b, without
// decoding the rest of it: it finds a reply's id even when the reply is too large, too deep
// or not valid JSON further on, so the call it answers can fail at once instead of waiting
// for its timeout. Escaped field names are not matched.
func TopLevelField(b []byte, name string) ([]byte, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return nil, false
		}
		end := stringEnd(b, i)
		if end < 0 {
			return nil, false
		}
		key := b[i+1 : end]
		i = skipSpace(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		vend := valueEnd(b, i)
		if vend < 0 {
			return nil, false
		}
		if string(key) == name {
			return b[i:vend], true
		}
		i = skipSpace(b, vend)
		if i >= len(b) || b[i] != ',' {
			return nil, false
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just past the JSON value that starts at b[i], or -1.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end := stringEnd(b, i)
		if end < 0 {
			return -1
		}
		return end + 1
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end := stringEnd(b, i)
				if end < 0 {
					return -1
				}
				i = end
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}
