package tool

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CodeDuplicateKey: a tool call's arguments give one key twice in an object (or two keys
// that differ only in letter case), so readers that keep the first value, the last or
// either spelling would each see another call. The call is refused, and the model told why.
const CodeDuplicateKey = "DUPLICATE_KEY"

// Args are a tool call's arguments decoded once. Whoever reads a call's arguments (the
// policies, the events and the person asked to approve it, the tool) reads this one value:
// Raw is what the tool gets, Value what Raw decodes to, and ParseArgs refuses any Raw
// that two decoders could read as two different values.
type Args struct {
	// Raw is the arguments object, exactly the bytes that were decoded.
	Raw json.RawMessage
	// Value is Raw decoded, numbers as json.Number (so none is rounded).
	Value map[string]any
}

// ParseArgs decodes the arguments a model sent for a tool call. Empty text and null mean no
// arguments ({}); a JSON string holding an object (what a model that double-encodes sends,
// and how host/model keeps arguments that were not JSON) is that object. Anything else that
// is not one JSON object is a TOOL_ARGUMENT error, and an object that gives a key twice at
// any depth, or two keys that differ only in letter case (encoding/json and others match
// names that way), a DUPLICATE_KEY error. The error's message reads after "the arguments of
// Tool__method". The bytes are untrusted: ParseArgs never panics.
func ParseArgs(raw json.RawMessage) (Args, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return Args{Raw: json.RawMessage(`{}`), Value: map[string]any{}}, nil
	}
	if t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) == nil {
			inner := bytes.TrimSpace([]byte(s))
			if len(inner) == 0 || inner[0] != '{' || !json.Valid(inner) {
				return Args{}, Errorf(CodeToolArgument, "are not valid JSON (%s)", excerpt(s, 80))
			}
			t = inner
		}
	}
	if !json.Valid(t) {
		return Args{}, Errorf(CodeToolArgument, "are not valid JSON (%s)", excerpt(string(t), 80))
	}
	if t[0] != '{' {
		return Args{}, Errorf(CodeToolArgument, "are %s, not a JSON object", jsonKind(t[0]))
	}
	// Valid JSON nests at most 10,000 deep (encoding/json's limit), which bounds the
	// recursion below.
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	v, err := strictValue(dec, nil)
	if err != nil {
		return Args{}, err
	}
	return Args{Raw: json.RawMessage(t), Value: v.(map[string]any)}, nil
}

// strictValue reads the next value of dec, refusing duplicate keys; path is where it is, for
// the message.
func strictValue(dec *json.Decoder, path []string) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, Errorf(CodeToolArgument, "are not valid JSON (%v)", err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '[':
		list := []any{}
		for i := 0; dec.More(); i++ {
			v, err := strictValue(dec, append(path, "["+strconv.Itoa(i)+"]"))
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, Errorf(CodeToolArgument, "are not valid JSON (%v)", err)
		}
		return list, nil
	case '{':
		obj := map[string]any{}
		var folded map[string]string // folded key -> the key as first written
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, Errorf(CodeToolArgument, "are not valid JSON (%v)", err)
			}
			k, _ := kt.(string)
			if _, dup := obj[k]; dup {
				return nil, Errorf(CodeDuplicateKey, "give the key %s twice%s", quoteKey(k), where(path))
			}
			if folded == nil {
				folded = map[string]string{}
			}
			f := foldKey(k)
			if first, dup := folded[f]; dup {
				return nil, Errorf(CodeDuplicateKey, "give the keys %s and %s%s, which differ only in letter case", quoteKey(first), quoteKey(k), where(path))
			}
			folded[f] = k
			v, err := strictValue(dec, append(path, "."+quoteKey(k)))
			if err != nil {
				return nil, err
			}
			obj[k] = v
		}
		if _, err := dec.Token(); err != nil {
			return nil, Errorf(CodeToolArgument, "are not valid JSON (%v)", err)
		}
		return obj, nil
	}
	return nil, Errorf(CodeToolArgument, "are not valid JSON (unexpected %q)", rune(d))
}

// foldKey folds a key the way encoding/json matches object keys to struct fields (ASCII
// letters to upper case, other letters through lower then upper case), so that two keys one
// Go tool would read as one field fold alike.
func foldKey(k string) string {
	var b strings.Builder
	b.Grow(len(k))
	for _, r := range k {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			continue
		}
		b.WriteRune(unicode.ToUpper(unicode.ToLower(r)))
	}
	return b.String()
}

// quoteKey shows a key in a message: quoted, its control characters escaped, cut at 64
// characters.
func quoteKey(k string) string { return excerpt(k, 64) }

// where says where in the arguments a nested key is: "" at the top, else " in a.b[2]".
func where(path []string) string {
	if len(path) == 0 {
		return ""
	}
	p := strings.TrimPrefix(strings.Join(path, ""), ".")
	if len(p) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		p = p[:cut] + "…"
	}
	return " in " + p
}

// excerpt quotes at most most bytes of s, cut on a character boundary.
func excerpt(s string, most int) string {
	if len(s) <= most {
		return strconv.Quote(s)
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

func jsonKind(b byte) string {
	switch b {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}
