// Package detect owns the content detectors of host/policy: prompt injection, destructive
// operations, profanity, Markdown, PII (SSN, credit card, email, phone), API keys and IPv4
// addresses. Detection is one pass over the text: a byte-class dispatch finds the few
// places where a detector could start (a word start, a digit, an '@', a Markdown marker),
// cheap checks reject most of them, and only the survivors run a small anchored pattern or
// a hand-written validator (Luhn, SSN area rules, IPv4 octets).
//
// Scan also runs the detectors over the look-alike folding of the text (package fold) and
// maps what it finds there back to spans of the original text.
package detect

import (
	"sort"
	"strings"

	"halolang.dev/halo/host/policy/fold"
)

// A Category is a set of detector categories; each base category is one bit.
type Category uint16

// The base categories. PII is the union of SSN, CreditCard, Email and Phone.
const (
	PromptInjection Category = 1 << iota
	DestructiveOps
	Profanity
	Markdown
	SSN
	CreditCard
	Email
	Phone
	APIKey
	IPAddress

	PII = SSN | CreditCard | Email | Phone
)

var names = []struct {
	name string
	cat  Category
}{
	{"PromptInjection", PromptInjection},
	{"DestructiveOps", DestructiveOps},
	{"Profanity", Profanity},
	{"Markdown", Markdown},
	{"PII", PII},
	{"SSN", SSN},
	{"CreditCard", CreditCard},
	{"Email", Email},
	{"Phone", Phone},
	{"APIKey", APIKey},
	{"IPAddress", IPAddress},
}

// Parse returns the category called name (as written in Block(...) and Redact(...)).
func Parse(name string) (Category, bool) {
	for _, n := range names {
		if n.name == name {
			return n.cat, true
		}
	}
	return 0, false
}

// Names lists every category name, in the seed's order.
func Names() []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n.name
	}
	return out
}

// String returns the category's name, or the names of its bits joined by "|".
func (c Category) String() string {
	for _, n := range names {
		if n.cat == c {
			return n.name
		}
	}
	var parts []string
	for _, n := range names {
		if n.cat&(n.cat-1) == 0 && c&n.cat != 0 {
			parts = append(parts, n.name)
		}
	}
	return strings.Join(parts, "|")
}

// Blockable is the set Block(...) accepts; Redactable the set Redact(...) accepts.
const (
	Blockable  = PromptInjection | DestructiveOps | Profanity | Markdown | PII | APIKey
	Redactable = PII | APIKey | IPAddress
)

// A Match is one detection: bytes [Start, End) of the text, of one base category.
type Match struct {
	Start, End int
	Cat        Category
	// Bare is set when the match lies outside every JSON string value: in plain text, or
	// between the strings of JSON (a number, say). Replacing a bare match that is a whole
	// JSON number with a tag needs quotes to keep the JSON valid.
	Bare bool
}

// Scan finds every match of cats in s, in the text as written and in its look-alike
// folding, with spans of s. Matches are sorted by start; they may overlap, but a match
// found both as written and folded is reported once.
//
// JSON is read value by value: each string literal that stands as a JSON value or key (a
// '{', '[', ',' or ':' or a line start before it, a '}', ']', ',' or ':' or a line end after
// it) is detected in on its own, so no match runs from one field into the next, and a
// literal with escapes is decoded first ("\n123-45-6789" holds an SSN) and its matches are
// spans of whole escapes, so redacting one keeps the JSON valid. A decoded value that is
// itself JSON is read the same way, up to MaxDepth levels.
//
// Folding is done line by line, and only for lines that hold a non-ASCII byte or an
// escape: the detectors never match across a line break, and clean lines, the bulk of
// most text, are scanned once.
func Scan(s string, cats Category) []Match {
	return scanDepth(s, cats, MaxDepth)
}

// MaxDepth is how many levels of JSON strings held in JSON strings Scan decodes.
const MaxDepth = 4

func scanDepth(s string, cats Category, depth int) []Match {
	var ms []Match
	sorted := true
	w := newWalker(s, cats, func(m Match) bool {
		if n := len(ms); n > 0 && m.Start <= ms[n-1].Start {
			sorted = false
		}
		ms = append(ms, m)
		return true
	})
	w.walk(s, 0, depth)
	if sorted {
		return ms
	}
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Start != ms[j].Start {
			return ms[i].Start < ms[j].Start
		}
		if ms[i].End != ms[j].End {
			return ms[i].End > ms[j].End
		}
		return ms[i].Cat < ms[j].Cat
	})
	out := ms[:1]
	for _, m := range ms[1:] {
		if m != out[len(out)-1] {
			out = append(out, m)
		}
	}
	return out
}

// First returns the first match of cats in s found (as written or folded), if any.
func First(s string, cats Category) (Match, bool) {
	var m Match
	found := false
	w := newWalker(s, cats, func(x Match) bool { m, found = x, true; return false })
	w.walk(s, 0, MaxDepth)
	return m, found
}

// A walker runs the detectors over a text unit by unit and hands each match, as a span of
// the whole text, to emit; emit returns false to stop the walk.
type walker struct {
	cats Category
	emit func(Match) bool
	// inValue is set inside a JSON string value: matches there are not Bare.
	inValue bool
	// whole is the text the walk started on (at offset 0), and trig the offset in it of the
	// next byte where folding may change something (len(whole) for none, -1 not yet looked
	// for): units come in order, so whole is searched for such bytes once, and a unit before
	// the next one is not folded at all.
	whole string
	trig  int
	kws   *keywordTable // nil when cats needs no keyword
}

// newWalker starts a walk of whole for cats.
func newWalker(whole string, cats Category, emit func(Match) bool) *walker {
	w := &walker{cats: cats, emit: emit, whole: whole, trig: -1}
	if cats&(PromptInjection|DestructiveOps|Profanity|APIKey) != 0 {
		w.kws = keywords()
	}
	return w
}

// walk detects in s, which starts at offset off of the whole text: JSON string values on
// their own (decoding at most depth more levels), the rest as plain text. It returns false
// once emit has asked to stop.
func (w *walker) walk(s string, off, depth int) bool {
	if depth <= 0 || strings.IndexByte(s, '"') < 0 {
		return w.plain(s, off)
	}
	gap := 0  // start of the plain text not yet detected in
	key := "" // the last key read, while its value is next
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '"')
		if k < 0 {
			break
		}
		q := i + k
		end, escaped := fold.LiteralEnd(s[q:])
		if end < 0 {
			i = q - end - 1 // where the attempt stopped
			continue
		}
		e := q + end
		i = e
		isValue, before, after := jsonValue(s, q, e)
		if !escaped && !isValue {
			key = ""
			continue
		}
		// The gap keeps the quotes around the value: they end a number or word there.
		if !w.plain(s[gap:q+1], off+gap) {
			return false
		}
		gap = e - 1
		content := s[q+1 : e-1]
		u := fold.Text{Folded: content}
		if escaped {
			u = fold.Unquote(content)
		}
		if before == ':' && key != "" && w.cats&APIKey != 0 {
			// A value named by its key: {"aws_secret_access_key": "…"}.
			if m, ok := keyedValue(key, u.Folded); ok {
				a, b := u.Span(m.Start, m.End)
				if !w.emit(Match{Start: off + q + 1 + a, End: off + q + 1 + b, Cat: m.Cat}) {
					return false
				}
			}
		}
		key = ""
		if after == ':' {
			key = u.Folded
		}
		if !escaped {
			if !w.value(content, off+q+1) {
				return false
			}
			continue
		}
		base := off + q + 1
		inner := newWalker(u.Folded, w.cats, func(m Match) bool {
			a, b := u.Span(m.Start, m.End)
			m.Start, m.End = a+base, b+base
			return w.emit(m)
		})
		inner.inValue = true
		if !inner.walk(u.Folded, 0, depth-1) {
			return false
		}
	}
	return w.plain(s[gap:], off+gap)
}

// value detects in a JSON string value with no escapes.
func (w *walker) value(s string, off int) bool {
	w.inValue = true
	ok := w.plain(s, off)
	w.inValue = false
	return ok
}

// jsonValue reports whether the literal s[q:e] stands where JSON puts a key or value, with
// the bytes before and after it, blanks skipped (0 at the text's start or end).
func jsonValue(s string, q, e int) (ok bool, before, after byte) {
	p := q - 1
	for p >= 0 && isBlank(s[p]) {
		p--
	}
	if p >= 0 {
		before = s[p]
	}
	n := e
	for n < len(s) && isBlank(s[n]) {
		n++
	}
	if n < len(s) {
		after = s[n]
	}
	switch before {
	case 0, '{', '[', ',', ':', '\n':
	default:
		return false, before, after
	}
	switch after {
	case 0, '}', ']', ',', ':', '\n':
		return true, before, after
	}
	return false, before, after
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

// plain detects in s as plain text: as written, then the lines that folding changes, then
// any text hidden in tag characters.
func (w *walker) plain(s string, off int) bool {
	if len(s) < 16 && isInert(s) {
		return true // `", "` between two values
	}
	stopped := false
	scanWith(s, w.cats, w.kws, func(m Match) bool {
		m.Start, m.End, m.Bare = m.Start+off, m.End+off, !w.inValue
		if !w.emit(m) {
			stopped = true
			return false
		}
		return true
	})
	if stopped {
		return false
	}
	if w.whole != "" && off+len(s) <= len(w.whole) {
		if w.trig < off {
			w.trig = len(w.whole)
			if k := fold.Index(w.whole[off:], fold.Options{}); k >= 0 {
				w.trig = off + k
			}
		}
		if w.trig >= off+len(s) {
			return true // nothing to fold in this unit
		}
	}
	return foldLines(s, func(lineOff int, line string, f fold.Text) bool {
		if f.Changed() && !w.mapped(f, off+lineOff) {
			return false
		}
		if fold.HasTags(line) {
			if t, ok := fold.Tags(line); ok && !w.mapped(t, off+lineOff) {
				return false
			}
		}
		return true
	})
}

// mapped detects in the decoded text of t and maps each match back to t's original, which
// starts at off.
func (w *walker) mapped(t fold.Text, off int) bool {
	stopped := false
	scanWith(t.Folded, w.cats, w.kws, func(m Match) bool {
		a, b := t.Span(m.Start, m.End)
		m.Start, m.End, m.Bare = a+off, b+off, !w.inValue
		if !w.emit(m) {
			stopped = true
			return false
		}
		return true
	})
	return !stopped
}

// foldLines calls fn with each line of s that folding may change (its offset, its text and
// its folding) until fn returns false; it reports whether fn never did.
func foldLines(s string, fn func(off int, line string, f fold.Text) bool) bool {
	i := 0
	for i < len(s) {
		k := fold.Index(s[i:], fold.Options{})
		if k < 0 {
			return true
		}
		k += i
		start := strings.LastIndexByte(s[:k], '\n') + 1
		end := strings.IndexByte(s[k:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += k
		}
		line := s[start:end]
		if !fn(start, line, fold.String(line, fold.Options{})) {
			return false
		}
		i = end
	}
	return true
}

// Find appends to dst every match of cats in s as written (no folding, no decoding), sorted
// by start.
func Find(s string, cats Category, dst []Match) []Match {
	n := len(dst)
	scan(s, cats, func(m Match) bool { dst = append(dst, m); return true })
	out := dst[n:]
	if !sort.SliceIsSorted(out, func(i, j int) bool { return out[i].Start < out[j].Start }) {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	}
	return dst
}
