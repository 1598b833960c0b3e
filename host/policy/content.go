package policy

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"halolang.dev/halo/host/policy/detect"
)

// A Set is the policies an agent requires, in the order written. The zero Set enforces
// nothing. A Set is read-only once built and safe for concurrent use.
type Set []*Policy

// ruleRef is one rule of one policy of a set.
type ruleRef struct {
	p *Policy
	r *rule
}

func (s Set) each(kind ruleKind, fn func(p *Policy, r *rule) bool) {
	for _, p := range s {
		if p == nil {
			continue
		}
		for _, r := range p.rules {
			if r.kind == kind && !fn(p, r) {
				return
			}
		}
	}
}

func (s Set) mask(kind ruleKind) detect.Category {
	var m detect.Category
	s.each(kind, func(_ *Policy, r *rule) bool { m |= r.mask; return true })
	return m
}

// Redacts reports whether the set has any Redact rule.
func (s Set) Redacts() bool { return s.mask(kRedact) != 0 }

// Blocks reports whether the set has any Block rule.
func (s Set) Blocks() bool { return s.mask(kBlock) != 0 }

// tag returns the redaction tag for a base category: the category named by the first
// Redact rule that covers it (Redact(PII) writes [REDACTED:PII] for an email).
func (s Set) tag(c detect.Category) string {
	tag := ""
	s.each(kRedact, func(_ *Policy, r *rule) bool {
		for _, named := range r.cats {
			if named&c != 0 {
				tag = "[REDACTED:" + named.String() + "]"
				return false
			}
		}
		return true
	})
	return tag
}

// Redact applies every Redact rule of the set to text: each match, found as written or
// with look-alikes folded, is replaced, as it appears in text, by [REDACTED:<category>].
// Redacting twice changes nothing more.
func (s Set) Redact(text string) string {
	mask := s.mask(kRedact)
	if mask == 0 || text == "" {
		return text
	}
	out, _, _ := s.redact(text, detect.Scan(text, mask), mask)
	return out
}

// maxRedactPasses bounds Redact's passes, as a guard: text needs one, and two when a tag makes a
// new match next to it.
const maxRedactPasses = 8

// A replacement is a span of the text redactMatches was given and where its tag went.
type replacement struct {
	start, end       int // in the text given
	outStart, outEnd int // in the text returned
}

// redact replaces the matches of ms in mask (ms being every match of a scan of all of text)
// and goes on until nothing more matches, so that redacting the result again changes
// nothing: a tag changes what surrounds its neighbours (a key-like run that the digits of an
// IP address after it made too long to be a key is a key once the address is a tag).
//
// After a pass only the lines that got a tag are scanned again. A redactable match lies
// within one line and is decided by that line alone (detect.Reach), so a line without a tag,
// which had no match left, still has none: redacting costs one scan and the tags' lines, not
// a second scan of everything. FuzzRedactLines checks this against scanning all again.
//
// It returns the redacted text, the first pass's replacements, and whether that first pass
// was all (no tag made a new match).
func (s Set) redact(text string, ms []detect.Match, mask detect.Category) (string, []replacement, bool) {
	out, first := s.redactMatches(text, ms, mask)
	if len(first) == 0 {
		return text, nil, true
	}
	repl := first
	for pass := 1; pass < maxRedactPasses; pass++ {
		var again []detect.Match
		lineEnd := -1
		for _, r := range repl {
			if r.outStart < lineEnd {
				continue // on a line already scanned again
			}
			ls := strings.LastIndexByte(out[:r.outStart], '\n') + 1
			lineEnd = len(out)
			if k := strings.IndexByte(out[r.outEnd:], '\n'); k >= 0 {
				lineEnd = r.outEnd + k
			}
			for _, m := range detect.Scan(out[ls:lineEnd], mask) {
				m.Start, m.End = m.Start+ls, m.End+ls
				again = append(again, m)
			}
		}
		var next string
		next, repl = s.redactMatches(out, again, mask)
		if len(repl) == 0 {
			return out, first, pass == 1
		}
		out = next
	}
	return out, first, false
}

// redactMatches replaces the matches of ms whose category is in mask, and lists what it
// replaced.
func (s Set) redactMatches(text string, ms []detect.Match, mask detect.Category) (string, []replacement) {
	var tags [16]string // by bit index of the base category
	tagOf := func(c detect.Category) string {
		k := bitIndex(c)
		if tags[k] == "" {
			tags[k] = s.tag(c)
		}
		return tags[k]
	}
	var b strings.Builder
	var repl []replacement
	last := 0
	jsonStart, jsonEnd := -1, -1 // the JSON in text, found when first needed
	for i := 0; i < len(ms); {
		if ms[i].Cat&mask == 0 {
			i++
			continue
		}
		start, end, cat, bare := ms[i].Start, ms[i].End, ms[i].Cat, ms[i].Bare
		// Merge every match that overlaps this one; the first one's category names it.
		j := i + 1
		for j < len(ms) && ms[j].Start < end {
			if ms[j].Cat&mask != 0 && ms[j].End > end {
				end = ms[j].End
			}
			j++
		}
		i = j
		if start < last {
			start = last
		}
		if start >= end {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[last:start])
		tag := tagOf(cat)
		if bare && jsonNumber(text, start, end) {
			if jsonStart < 0 {
				jsonStart, jsonEnd = 0, 0
				if js, _, ok := ExtractJSON(text); ok {
					jsonStart = strings.Index(text, js)
					jsonEnd = jsonStart + len(js)
				}
			}
			if start >= jsonStart && end <= jsonEnd {
				// A number of JSON becomes a string, so the JSON stays valid.
				tag = `"` + tag + `"`
			}
		}
		repl = append(repl, replacement{start, end, b.Len(), b.Len() + len(tag)})
		b.WriteString(tag)
		last = end
	}
	if len(repl) == 0 {
		return text, nil
	}
	b.WriteString(text[last:])
	return b.String(), repl
}

// apply redacts text and then checks it against the Block rules. Both kinds of rule are
// detected in one scan. When something was redacted, the redacted text is checked for Block
// rules only where the tags can have changed anything (detect.Reach): the lines around each
// tag are scanned again, and a match found before elsewhere stands.
func (s Set) apply(text string, phase Phase) (string, *Violation) {
	rmask, bmask := s.mask(kRedact), s.mask(kBlock)
	if rmask|bmask == 0 || text == "" {
		return text, nil
	}
	if rmask != 0 && bmask&detect.Hides&^rmask != 0 {
		// A Block category that is not redacted (Block(Email) with Redact(Phone)) could hide a
		// redactable match from a shared scan ("a@415-555-2671.com"): scan for each alone.
		out := s.Redact(text)
		return out, s.block(out, phase)
	}
	ms := detect.Scan(text, rmask|bmask)
	out, repl, settled := s.redact(text, ms, rmask)
	if bmask == 0 {
		return out, nil
	}
	if len(repl) == 0 {
		for _, m := range ms {
			if m.Cat&bmask != 0 {
				return text, s.blockViolation(text, m, phase)
			}
		}
		return text, nil
	}
	if !settled || slices.ContainsFunc(repl, func(r replacement) bool { return strings.IndexByte(text[r.start:r.end], '\n') >= 0 }) {
		return out, s.block(out, phase) // rare: check all of it again
	}
	return out, s.blockAround(text, out, ms, repl, bmask, phase)
}

// blockAround finds a Block match in out, the redaction of text by repl (one pass, no
// replaced span holding a line break), given ms, the matches of text. Around each replacement
// a region of whole lines, from Reach bytes before it to the end of its line, may have
// changed; out is scanned again there (reading Reach bytes on, so a phrase that runs into the
// next lines is seen whole). Outside them nothing changed that any detector reads, so a match
// of ms that starts outside every region is still a match.
func (s Set) blockAround(text, out string, ms []detect.Match, repl []replacement, bmask detect.Category, phase Phase) *Violation {
	type region struct{ start, end, outStart, outEnd int }
	var regions []region
	starts, ends := shifter{repl: repl}, shifter{repl: repl}
	for _, r := range repl {
		if n := len(regions); n > 0 && r.start-detect.Reach <= regions[n-1].end {
			if g := &regions[n-1]; r.end > g.end {
				g.end = lineEnd(text, r.end)
				g.outEnd = g.end + ends.at(g.end)
			}
			continue
		}
		start := strings.LastIndexByte(text[:max(r.start-detect.Reach, 0)], '\n') + 1
		end := lineEnd(text, r.end)
		// Line boundaries keep their place among the tags: no replacement crosses one.
		regions = append(regions, region{start, end, start + starts.at(start), end + ends.at(end)})
	}
	k := 0
	at := shifter{repl: repl}
	for _, m := range ms {
		if m.Cat&bmask == 0 {
			continue
		}
		for k < len(regions) && regions[k].end <= m.Start {
			k++
		}
		if k == len(regions) || m.Start < regions[k].start {
			d := at.at(m.Start)
			m.Start, m.End = m.Start+d, m.End+d
			return s.blockViolation(out, m, phase)
		}
	}
	for _, g := range regions {
		readTo := len(out)
		if g.outEnd+detect.Reach < len(out) {
			readTo = lineEnd(out, g.outEnd+detect.Reach)
		}
		for _, m := range detect.Scan(out[g.outStart:readTo], bmask) {
			if m.Cat&bmask != 0 && m.Start < g.outEnd-g.outStart {
				m.Start, m.End = m.Start+g.outStart, m.End+g.outStart
				return s.blockViolation(out, m, phase)
			}
		}
	}
	return nil
}

// lineEnd is the offset of the line break that ends the line holding s[i], or len(s).
func lineEnd(s string, i int) int {
	if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
		return i + k
	}
	return len(s)
}

// A shifter tells how far positions of the text redactMatches was given, asked in order and
// outside every replaced span, moved in its output.
type shifter struct {
	repl []replacement
	next int // repl[:next] lie before the last position asked
	d    int
}

func (sh *shifter) at(pos int) int {
	for sh.next < len(sh.repl) && sh.repl[sh.next].end <= pos {
		r := sh.repl[sh.next]
		sh.d += (r.outEnd - r.outStart) - (r.end - r.start)
		sh.next++
	}
	return sh.d
}

// jsonNumber reports whether text[start:end] is written as a whole JSON number standing as
// a value: a '[', ',' or ':' before it and a ',', ']' or '}' after it (blanks skipped).
func jsonNumber(text string, start, end int) bool {
	for k := start; k < end; k++ {
		if c := text[k]; !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			return false
		}
	}
	p := start - 1
	for p >= 0 && isSpace(text[p]) {
		p--
	}
	n := end
	for n < len(text) && isSpace(text[n]) {
		n++
	}
	return p >= 0 && strings.IndexByte("[,:", text[p]) >= 0 && n < len(text) && strings.IndexByte(",]}", text[n]) >= 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func bitIndex(c detect.Category) int {
	k := 0
	for c > 1 {
		c >>= 1
		k++
	}
	return k
}

// block returns the violation of the first Block rule that text trips.
func (s Set) block(text string, phase Phase) *Violation {
	mask := s.mask(kBlock)
	if mask == 0 || text == "" {
		return nil
	}
	m, ok := detect.First(text, mask)
	if !ok {
		return nil
	}
	return s.blockViolation(text, m, phase)
}

// blockViolation names the first Block rule that covers m.
func (s Set) blockViolation(text string, m detect.Match, phase Phase) *Violation {
	var v *Violation
	s.each(kBlock, func(p *Policy, r *rule) bool {
		if r.mask&m.Cat == 0 {
			return true
		}
		named := m.Cat
		for _, c := range r.cats {
			if c&m.Cat != 0 {
				named = c
				break
			}
		}
		// The message names the category only: the matched text is exactly what Block keeps
		// out of events, run records and logs.
		v = p.violation(r, phase, "%s detected", named)
		return false
	})
	return v
}

func excerpt(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// Input applies the set to text going to the model (a prompt, a tool result turned into
// text): Redact rules first, then Block rules on what is left. It returns the redacted
// text, or a *Violation (phase input) when a Block rule matches.
func (s Set) Input(text string) (string, error) {
	text, v := s.apply(text, Input)
	if v != nil {
		return text, v
	}
	return text, nil
}

// InputValue is Input for a structured value (what encoding/json produces, with
// float64 or json.Number numbers): objects are read field by field (keys, strings and
// numbers), and the redacted value keeps its shape. A number that holds a match becomes
// the redacted string.
func (s Set) InputValue(v any) (any, error) {
	v = s.RedactValue(v)
	if viol := s.blockValue(v, Input); viol != nil {
		return v, viol
	}
	return v, nil
}

// RedactValue applies the Redact rules to every key, string and number of v.
func (s Set) RedactValue(v any) any {
	if !s.Redacts() {
		return v
	}
	return s.redactValue(v)
}

func (s Set) redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return s.Redact(x)
	case json.Number:
		if r := s.Redact(string(x)); r != string(x) {
			return r
		}
		return x
	case float64:
		str := formatNumber(x)
		if r := s.Redact(str); r != str {
			return r
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.redactValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			nk := s.Redact(k)
			// Two keys redacted alike must not overwrite each other.
			for n := 2; nk != k; n++ {
				if _, taken := out[nk]; !taken {
					break
				}
				nk = s.Redact(k) + "#" + strconv.Itoa(n)
			}
			out[nk] = s.redactValue(x[k])
		}
		return out
	}
	return v
}

func formatNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func (s Set) blockValue(v any, phase Phase) *Violation {
	if !s.Blocks() {
		return nil
	}
	var found *Violation
	walkScalars(v, true, func(str string) bool {
		found = s.block(str, phase)
		return found == nil
	})
	return found
}

// walkScalars calls fn with each string, number and boolean of v (and each key, when
// keys is set), as text, until fn returns false.
func walkScalars(v any, keys bool, fn func(string) bool) bool {
	switch x := v.(type) {
	case string:
		return fn(x)
	case json.Number:
		return fn(string(x))
	case float64:
		return fn(formatNumber(x))
	case bool:
		return fn(strconv.FormatBool(x))
	case []any:
		for _, e := range x {
			if !walkScalars(e, keys, fn) {
				return false
			}
		}
	case map[string]any:
		ks := make([]string, 0, len(x))
		for k := range x {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			if keys && !fn(k) {
				return false
			}
			if !walkScalars(x[k], keys, fn) {
				return false
			}
		}
	}
	return true
}

// InputJSON is InputValue for a JSON text (a tool's result): it is decoded with its
// numbers kept exact, read field by field, and encoded again. Text that is not JSON goes
// through Input as text.
func (s Set) InputJSON(raw json.RawMessage) (json.RawMessage, error) {
	v, ok := decodeAll(strings.TrimSpace(string(raw)))
	if !ok {
		text, err := s.Input(string(raw))
		return json.RawMessage(text), err
	}
	out, verr := s.InputValue(v)
	b, err := json.Marshal(out)
	if err != nil {
		return raw, err
	}
	if verr != nil {
		return b, verr
	}
	return b, nil
}
