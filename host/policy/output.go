package policy

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// A Lookup resolves the "context.…" paths Validate compares against. The runtime
// implements it over the run's context; path is the whole path as written
// ("context.data.request.limit").
type Lookup interface {
	Lookup(path string) (any, bool)
}

// An Answer is a model's final answer.
type Answer struct {
	// Text is the answer as the model wrote it.
	Text string
	// CompletionTokens is what the provider reported (0 when it reported nothing).
	CompletionTokens int
}

// A Result is an answer that passed the output policies.
type Result struct {
	// Text is the answer after redaction; under Require(JSON) or Enforce(JSON), the JSON
	// text alone, taken out of any prose or fence around it.
	Text string
	// JSON is the decoded JSON (numbers as json.Number) when the answer is JSON and a
	// rule asked for it; nil otherwise.
	JSON any
	// IsJSON is set when Text was taken as JSON.
	IsJSON bool
}

// Output applies the set to an answer: Redact rules, then Block rules, then the other
// answer rules of each policy in the order written. It returns the answer as the agent
// returns it, or the first *Violation (phase output). ctx may be nil when no Validate rule
// compares with a context path.
func (s Set) Output(a Answer, ctx Lookup) (Result, error) {
	text, v := s.apply(a.Text, Output)
	res := Result{Text: text}
	if v != nil {
		return res, v
	}
	var (
		parsed    bool
		jsonText  string
		jsonValue any
		jsonOK    bool
	)
	getJSON := func() (string, any, bool) {
		if !parsed {
			jsonText, jsonValue, jsonOK = ExtractJSON(res.Text)
			parsed = true
		}
		return jsonText, jsonValue, jsonOK
	}
	for _, p := range s {
		if p == nil {
			continue
		}
		for _, r := range p.rules {
			var v *Violation
			switch r.kind {
			case kMaxWords:
				if n := len(strings.Fields(res.Text)); n > r.n {
					v = p.violation(r, Output, "the answer has %d words, more than %d", n, r.n)
				}
			case kMaxChars:
				if n := utf8.RuneCountInString(res.Text); n > r.n {
					v = p.violation(r, Output, "the answer has %d characters, more than %d", n, r.n)
				}
			case kMaxTokens:
				if a.CompletionTokens > r.n {
					v = p.violation(r, Output, "the provider reported %d completion tokens, more than %d", a.CompletionTokens, r.n)
				}
			case kRequireJSON, kEnforceJSON:
				text, val, ok := getJSON()
				if !ok {
					v = p.violation(r, Output, "the answer is not JSON")
					break
				}
				res.Text, res.JSON, res.IsJSON = text, val, true
			case kRequireXML:
				if err := checkXML(res.Text); err != nil {
					v = p.violation(r, Output, "the answer is not well-formed XML: %v", err)
				}
			case kRequireCitation:
				if !citation().MatchString(res.Text) {
					v = p.violation(r, Output, "the answer cites nothing (like [1] or [doc_id])")
				}
			case kMatchRegex:
				ok, err := matchEvery(r, res.Text)
				if err != nil {
					v = p.violation(r, Output, "%v", err)
				} else if !ok {
					v = p.violation(r, Output, "the answer does not match %q", r.re.String())
				}
			case kValidate:
				_, val, ok := getJSON()
				if !ok {
					v = p.violation(r, Output, "the answer is not JSON, so %q cannot be checked", r.field)
					break
				}
				if msg := validate(r, val, ctx); msg != "" {
					v = p.violation(r, Output, "%s", msg)
				}
			}
			if v != nil {
				return res, v
			}
		}
	}
	return res, nil
}

// SpendLimit returns the smallest MaxSpend of the set, in USD.
func (s Set) SpendLimit() (float64, bool) {
	limit, ok := 0.0, false
	s.each(kMaxSpend, func(_ *Policy, r *rule) bool {
		if !ok || r.usd < limit {
			limit, ok = r.usd, true
		}
		return true
	})
	return limit, ok
}

// TokenLimit returns the smallest MaxTokens of the set: a reply cap worth sending.
func (s Set) TokenLimit() (int, bool) {
	limit, ok := 0, false
	s.each(kMaxTokens, func(_ *Policy, r *rule) bool {
		if !ok || r.n < limit {
			limit, ok = r.n, true
		}
		return true
	})
	return limit, ok
}

var citation = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[(?:\d+|[A-Za-z_][\w.:/-]*)\]`) })

var fence = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("(?s)```[ \t]*(?:json|JSON)?[ \t]*\r?\n(.*?)\r?\n?```")
})

// ExtractJSON finds the JSON in an answer: the whole answer, the body of a ```json fence,
// or the first object or array inside prose. It returns the JSON text and its value, with
// numbers as json.Number.
func ExtractJSON(text string) (string, any, bool) {
	t := strings.TrimSpace(text)
	if v, ok := decodeAll(t); ok {
		return t, v, true
	}
	for _, m := range fence().FindAllStringSubmatch(text, 4) {
		body := strings.TrimSpace(m[1])
		if v, ok := decodeAll(body); ok {
			return body, v, true
		}
	}
	// The first object or array in prose: try each opening brace until one decodes.
	for i, tries := 0, 0; i < len(text) && tries < 32; i++ {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		tries++
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil {
			n := int(dec.InputOffset())
			return text[i : i+n], v, true
		}
	}
	return "", nil, false
}

func decodeAll(s string) (any, bool) {
	if s == "" {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

var xmlFence = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?s)^```[a-zA-Z]*[ \t]*\r?\n(.*?)\r?\n?```$") })

// checkXML accepts one well-formed root element (a ```xml fence around it is allowed).
func checkXML(text string) error {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "```") {
		if m := xmlFence().FindStringSubmatch(t); m != nil {
			t = strings.TrimSpace(m[1])
		}
	}
	dec := xml.NewDecoder(strings.NewReader(t))
	dec.Strict = true
	depth, roots := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch x := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(x)) > 0 {
				return errors.New("text outside the root element")
			}
		}
	}
	switch {
	case roots == 0:
		return errors.New("no element")
	case roots > 1:
		return errors.New("more than one root element")
	case depth != 0:
		return errors.New("unclosed element")
	}
	return nil
}

// validate compares the answer's field with the rule's value; it returns "" when the
// comparison holds and says why not otherwise.
func validate(r *rule, answer any, ctx Lookup) string {
	got, ok := fieldOf(answer, r.field)
	if !ok {
		return "the answer has no field " + strconv.Quote(r.field)
	}
	want := r.value
	if path, isStr := want.(string); isStr && strings.HasPrefix(path, "context.") {
		if ctx == nil {
			return "cannot resolve " + path + ": no context"
		}
		v, found := ctx.Lookup(path)
		if !found {
			return path + " is not set"
		}
		want = v
	}
	if compare(got, r.op, want) {
		return ""
	}
	return r.field + " " + describe(got) + " is not " + r.op + " " + describe(want)
}

func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return excerpt(string(b))
}

// fieldOf walks a dotted path ("refund.amount", "items.0.price") through a JSON value.
func fieldOf(v any, path string) (any, bool) {
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[part]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// number reads v as a number: a JSON number, or a string holding one ("4" counts as 4).
// true, null, [], {} and "" are not numbers.
func number(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case json.Number:
		g, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return 0, false
		}
		f = g
	case string:
		t := strings.TrimSpace(x)
		if t == "" {
			return 0, false
		}
		g, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return 0, false
		}
		f = g
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func compare(a any, op string, b any) bool {
	x, aNum := number(a)
	y, bNum := number(b)
	if aNum && bNum {
		switch op {
		case "==":
			return x == y
		case "!=":
			return x != y
		case "<":
			return x < y
		case "<=":
			return x <= y
		case ">":
			return x > y
		case ">=":
			return x >= y
		}
	}
	switch op {
	case "==":
		return equal(a, b)
	case "!=":
		return !equal(a, b)
	}
	// Ordering needs two numbers.
	return false
}

// equal compares two JSON values, numbers by value.
func equal(a, b any) bool {
	x, aNum := number(a)
	y, bNum := number(b)
	if aNum || bNum {
		return aNum && bNum && x == y
	}
	return reflect.DeepEqual(normalize(a), normalize(b))
}

func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := strconv.ParseFloat(string(x), 64)
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	}
	return v
}
