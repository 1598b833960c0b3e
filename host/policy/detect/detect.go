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

	"github.com/halo-lang/halo/host/policy/fold"
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
}

// Scan finds every match of cats in s, in the text as written and in its look-alike
// folding, with spans of s. Matches are sorted by start; they may overlap, but a match
// found both as written and folded is reported once.
//
// Folding is done line by line, and only for lines that hold a non-ASCII byte or an
// escape: the detectors never match across a line break, and clean lines, the bulk of
// most text, are scanned once.
func Scan(s string, cats Category) []Match {
	ms := Find(s, cats, nil)
	n := len(ms)
	foldLines(s, func(off int, f fold.Text) {
		k := len(ms)
		ms = Find(f.Folded, cats, ms)
		for i := k; i < len(ms); i++ {
			a, b := f.Span(ms[i].Start, ms[i].End)
			ms[i].Start, ms[i].End = a+off, b+off
		}
	})
	if len(ms) == n {
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

// foldLines calls fn with the folding of each line of s that folding changes, and the
// line's offset in s.
func foldLines(s string, fn func(off int, f fold.Text)) {
	i := 0
	for i < len(s) {
		k := fold.Index(s[i:], fold.Options{})
		if k < 0 {
			return
		}
		k += i
		start := strings.LastIndexByte(s[:k], '\n') + 1
		end := strings.IndexByte(s[k:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += k
		}
		if f := fold.String(s[start:end], fold.Options{}); f.Changed() {
			fn(start, f)
		}
		i = end
	}
}

// First returns the first match of cats in s (as written or folded), if any.
func First(s string, cats Category) (Match, bool) {
	var m Match
	found := false
	scan(s, cats, func(x Match) bool { m, found = x, true; return false })
	if found {
		return m, true
	}
	foldLines(s, func(off int, f fold.Text) {
		if found {
			return
		}
		scan(f.Folded, cats, func(x Match) bool { m, found = x, true; return false })
		if found {
			a, b := f.Span(m.Start, m.End)
			m.Start, m.End = a+off, b+off
		}
	})
	return m, found
}

// Find appends to dst every match of cats in s as written (no folding), sorted by start.
func Find(s string, cats Category, dst []Match) []Match {
	n := len(dst)
	scan(s, cats, func(m Match) bool { dst = append(dst, m); return true })
	out := dst[n:]
	if !sort.SliceIsSorted(out, func(i, j int) bool { return out[i].Start < out[j].Start }) {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	}
	return dst
}
