// Package jsonappend appends JSON to byte slices, byte for byte as encoding/json's Marshal
// writes it, without reflection for the shapes JSON values take in Go (nil, strings, bools,
// numbers, map[string]any, []any, json.RawMessage, json.Number...): the run record
// (host/runtime) and halo mcp's answers (host/mcpserver) are written with it. A value of any
// other type goes through json.Marshal. Each function that can fail returns false where
// json.Marshal would return an error (a NaN, a time outside years 0-9999, invalid raw JSON);
// the caller then leaves the whole value to json.Marshal, so the error is its own.
//
// The v2 JSON API (github.com/go-json-experiment/json, behind encoding/json/v2) does not
// match it on the maps and lists halo writes: BenchmarkValue, one run on the 2-core
// development machine shared with other helpers' builds (load average 13), 5 runs each,
// min/median/max: a call's arguments 1.2/1.4/1.8 µs here, json.Marshal 2.9/3.1/18, v2 with
// v1's options (the same bytes) 4.0/8.9/12, v2's defaults 5.1/9.4/9.5; a structured output
// 3.7/5.0/5.7, 11/14/20, 9.8/14/27 and 5.2/8.5/16 µs. On a 17 KB string with an escape every
// ten bytes v2 was faster, 68/76/90 µs with v1's options against 86/105/122 here (and v1
// 106/139/207): String's escape path is the part to improve if long escaped answers matter.
package jsonappend

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// Value appends v as json.Marshal(v) writes it; false where json.Marshal fails.
func Value(b []byte, v any) ([]byte, bool) { return encoder{}.value(b, v) }

// Object appends m, its keys sorted, as json.Marshal(m) writes it; false where it fails.
func Object(b []byte, m map[string]any) ([]byte, bool) { return encoder{}.object(b, m) }

// encoder is Value's state.
type encoder struct {
	// depth counts the maps and lists the value being written is inside.
	depth int
}

// maxDepth is how deep the encoder follows maps and lists before it hands the value to
// json.Marshal, which finds cycles (past 1000 levels) where this encoder would loop forever.
const maxDepth = 100

// value appends v: JSON-shaped values by hand, anything else through json.Marshal.
func (e encoder) value(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return String(b, x), true
	case bool:
		return strconv.AppendBool(b, x), true
	case float64:
		return Float(b, x, 64)
	case float32:
		return Float(b, float64(x), 32)
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case int32:
		return strconv.AppendInt(b, int64(x), 10), true
	case int16:
		return strconv.AppendInt(b, int64(x), 10), true
	case int8:
		return strconv.AppendInt(b, int64(x), 10), true
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), true
	case uint64:
		return strconv.AppendUint(b, x, 10), true
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), true
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), true
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), true
	case uintptr:
		return strconv.AppendUint(b, uint64(x), 10), true
	case json.Number:
		s := string(x)
		if s == "" {
			s = "0" // as encoding/json writes Number's zero value
		}
		if !validNumber(s) {
			return b, false
		}
		return append(b, s...), true
	case json.RawMessage:
		return Raw(b, x)
	case map[string]any:
		return e.object(b, x)
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		if e.depth >= maxDepth {
			return marshal(b, x)
		}
		e.depth++
		b = append(b, '[')
		ok := true
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = e.value(b, el); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case []string:
		if x == nil {
			return append(b, "null"...), true
		}
		return Strings(b, x), true
	case map[string]string:
		if x == nil {
			return append(b, "null"...), true
		}
		var arr [16]string
		keys := SortedKeys(arr[:0], x)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = String(b, k)
			b = append(b, ':')
			b = String(b, x[k])
		}
		return append(b, '}'), true
	}
	return marshal(b, v)
}

// object appends m with its keys sorted, as encoding/json writes a map.
func (e encoder) object(b []byte, m map[string]any) ([]byte, bool) {
	if m == nil {
		return append(b, "null"...), true
	}
	if e.depth >= maxDepth {
		return marshal(b, m)
	}
	e.depth++
	var arr [16]string
	keys := SortedKeys(arr[:0], m)
	b = append(b, '{')
	ok := true
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = String(b, k)
		b = append(b, ':')
		if b, ok = e.value(b, m[k]); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// SortedKeys appends m's keys to keys, sorted.
func SortedKeys[V any](keys []string, m map[string]V) []string {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// IntMap appends m, its keys sorted.
func IntMap(b []byte, m map[string]int) []byte {
	var arr [16]string
	keys := SortedKeys(arr[:0], m)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = String(b, k)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(m[k]), 10)
	}
	return append(b, '}')
}

// Strings appends ss as a JSON array.
func Strings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = String(b, s)
	}
	return append(b, ']')
}

// marshal appends json.Marshal(v); false when it fails.
func marshal(b []byte, v any) ([]byte, bool) {
	m, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, m...), true
}

// htmlSafe[c] says ASCII byte c is written as itself in a JSON string by encoding/json (which
// escapes <, > and & for HTML).
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// String appends s as a JSON string exactly as encoding/json does: the short escapes
// (\b \f \n \r \t \" \\), \u00XX for other control characters and for <, > and &, U+2028
// and U+2029 escaped, and each byte of invalid UTF-8 written as \ufffd.
func String(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Float appends f as encoding/json does (ES6 number formatting); false for NaN and
// infinities, which it refuses.
func Float(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// e-09 becomes e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// Time appends t as its MarshalJSON writes it (RFC 3339 with nanoseconds); false where
// MarshalJSON fails: a year outside 0-9999, a zone offset of 24 hours or more.
func Time(b []byte, t time.Time) ([]byte, bool) {
	if _, off := t.Zone(); off == 0 {
		if y, mo, d := t.Date(); 0 <= y && y <= 9999 {
			return appendUTC(b, t, y, mo, d), true
		}
	}
	b = append(b, '"')
	n0 := len(b)
	b = t.AppendFormat(b, time.RFC3339Nano)
	if len(b)-n0 < len("2006-01-02T15:04:05Z") || b[n0+len("9999")] != '-' {
		return b, false
	}
	if b[len(b)-1] != 'Z' {
		c := b[len(b)-len("Z07:00")]
		h := b[len(b)-len("07:00"):]
		if ('0' <= c && c <= '9') || 10*(h[0]-'0')+(h[1]-'0') >= 24 {
			return b, false
		}
	}
	return append(b, '"'), true
}

// appendUTC appends t, a time of day d of month mo of year y (0 to 9999) in a zone 0
// hours from UTC (UTC, or the local time of a machine set to it), quoted, as AppendFormat
// with RFC3339Nano writes it: the fraction of a second without its trailing zeros (none
// when it is 0), Z for the zone. A run record holds several times, and AppendFormat, which
// reads its layout as it writes, took 3.4% of the instructions a committed run cost in
// BenchmarkCommitLayout (67 million of 1,970 under callgrind; Time now 55 million in all).
func appendUTC(b []byte, t time.Time, y int, mo time.Month, d int) []byte {
	h, mi, sec := t.Clock()
	b = append(b, '"',
		byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10), 'T',
		byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+sec/10), byte('0'+sec%10))
	if ns := t.Nanosecond(); ns != 0 {
		var frac [10]byte
		frac[0] = '.'
		for i := 9; i > 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := len(frac)
		for frac[n-1] == '0' {
			n--
		}
		b = append(b, frac[:n]...)
	}
	return append(b, 'Z', '"')
}

// Raw appends raw JSON as encoding/json writes a json.RawMessage: null for nil, else
// checked, with the spaces between tokens left out and <, >, &, U+2028 and U+2029 escaped.
// False when raw is not valid JSON (an empty one among them).
func Raw(b []byte, raw json.RawMessage) ([]byte, bool) {
	if raw == nil {
		return append(b, "null"...), true
	}
	if !json.Valid(raw) {
		return b, false
	}
	start := 0
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			b = append(b, raw[start:i]...)
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			start = i + 1
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
			b = append(b, raw[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xF])
			i += 2
			start = i + 1
		case inString:
			switch c {
			case '\\':
				i++ // the escaped byte is never a quote that ends the string
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			b = append(b, raw[start:i]...)
			start = i + 1
		}
	}
	return append(b, raw[start:]...), true
}

// validNumber reports whether s is a JSON number, as encoding/json checks a json.Number.
func validNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = s[1:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	return s == ""
}
