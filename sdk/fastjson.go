package sdk

import (
	"encoding"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Fast paths for the JSON of a call: arguments decoded into a parameter struct whose fields
// are plain (strings, booleans, integers, floats), and results that are a string or such a
// struct. encoding/json reads a value byte by byte through a state machine, twice when
// decoding (once to validate, once to decode), and was most of a 16 KB call's time in the
// plugin. These read and write strings eight bytes at a time and stop at what needs care.
//
// They give exactly what encoding/json gives, or give up: any input they do not handle (a
// key that is not a field, a value of another type, invalid UTF-8, a number out of range,
// anything not valid JSON) makes them report false, and encoding/json does the work, with
// its own result and error. FuzzFastDecode and FuzzFastEncode hold them to that.
//
// The v2 JSON API (github.com/go-json-experiment/json, behind encoding/json/v2) refuses
// unknown members itself and reads in one pass, but does not match them:
// BenchmarkFastJSONV2, one run on the 2-core development machine shared with other
// helpers' builds (load average 13 to 17), 5 runs each, min/median/max, here against v2:
// decoding a 1 KB string argument 1.5/2.8/3.9 µs against 3.7/4.1/7.0, 16 KB 33/46/84
// against 50/62/153, five plain fields 1.4/1.5/2.8 against 3.6/5.7/6.0; encoding a 16 KB
// string without escapes 43/48/84 against 53/54/133, five fields 2.4/2.8/4.9 against
// 3.4/9.9/10.8. A 16 KB string with an escape every ten bytes encodes in 102/116/472 µs
// here, 83/168/298 with v2 and 67/101/279 with encoding/json: appendString's escape path is
// what to improve if such results matter.

// A fastFields is the plan for a parameter or result struct: its fields by JSON name, in
// declaration order. It is nil for a type with any field the fast paths do not handle.
type fastFields []fastField

type fastField struct {
	name      string
	quoted    string // `"name":`, for encoding
	index     int
	kind      reflect.Kind
	omitEmpty bool
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
)

// plainKind reports whether values of t are read and written by the fast paths: the basic
// kinds, without methods that change how encoding/json treats them.
func plainKind(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
	default:
		return false
	}
	if t == reflect.TypeFor[json.Number]() {
		return false // a string that encoding/json reads and writes as a number
	}
	for _, i := range []reflect.Type{jsonUnmarshaler, jsonMarshaler, textUnmarshaler, textMarshaler} {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return false
		}
	}
	return true
}

// fieldsOf returns the plan of struct type t, or nil.
func fieldsOf(t reflect.Type) fastFields {
	if t.Kind() != reflect.Struct {
		return nil
	}
	for _, i := range []reflect.Type{jsonUnmarshaler, jsonMarshaler, textUnmarshaler, textMarshaler} {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return nil
		}
	}
	fs := fastFields{}
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous || !sf.IsExported() {
			return nil // embedded fields and their promotion rules: encoding/json's business
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		f := fastField{name: name, index: i, kind: sf.Type.Kind()}
		for opt := range strings.SplitSeq(opts, ",") {
			switch opt {
			case "":
			case "omitempty":
				f.omitEmpty = true
			default:
				return nil // ",string", ",omitzero", ...
			}
		}
		if !plainKind(sf.Type) || !plainName(name) || seen[name] {
			return nil
		}
		seen[name] = true
		q, _ := json.Marshal(name)
		f.quoted = string(q) + ":"
		fs = append(fs, f)
	}
	return fs
}

// plainName reports whether a JSON name needs no escaping and matches only itself: encoding/json
// also matches keys that differ in case, which the fast decoder leaves to it.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

func (fs fastFields) find(key []byte) *fastField {
	for i := range fs {
		if fs[i].name == string(key) {
			return &fs[i]
		}
	}
	return nil
}

// decode decodes the JSON object b into the struct v points to and returns the keys it held,
// or reports false, having set some fields maybe, for encoding/json to do it all again.
func (fs fastFields) decode(b []byte, v reflect.Value, keys []string) ([]string, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return keys, skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, false
		}
		end, escaped, _, ok := scanString(b, i)
		if !ok || escaped {
			return nil, false
		}
		f := fs.find(b[i+1 : end])
		if f == nil {
			return nil, false
		}
		keys = append(keys, f.name)
		i = skipSpace(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		if i, ok = f.set(b, i, v.Field(f.index)); !ok {
			return nil, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return keys, skipSpace(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

// set reads the value at b[i] into field fv and returns the index past it.
func (f *fastField) set(b []byte, i int, fv reflect.Value) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	if b[i] == 'n' {
		// null leaves a plain field as it is, as encoding/json does.
		return literal(b, i, "null")
	}
	switch f.kind {
	case reflect.String:
		if b[i] != '"' {
			return 0, false
		}
		s, end, ok := decodeString(b, i)
		if !ok {
			return 0, false
		}
		fv.SetString(s)
		return end, true
	case reflect.Bool:
		if b[i] == 't' {
			fv.SetBool(true)
			return literal(b, i, "true")
		}
		fv.SetBool(false)
		return literal(b, i, "false")
	}
	end, isInt := scanNumber(b, i)
	if end < 0 {
		return 0, false
	}
	num := string(b[i:end])
	switch f.kind {
	case reflect.Float32, reflect.Float64:
		x, err := strconv.ParseFloat(num, fv.Type().Bits())
		if err != nil {
			return 0, false
		}
		fv.SetFloat(x)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, err := strconv.ParseInt(num, 10, 64)
		if !isInt || err != nil || fv.OverflowInt(x) {
			return 0, false
		}
		fv.SetInt(x)
	default:
		x, err := strconv.ParseUint(num, 10, 64)
		if !isInt || err != nil || fv.OverflowUint(x) {
			return 0, false
		}
		fv.SetUint(x)
	}
	return end, true
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// scanNumber returns the index past the JSON number at b[i] (-1 when there is none) and
// whether it is written as an integer.
func scanNumber(b []byte, i int) (int, bool) {
	isInt := true
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return -1, false
	}
	if i < len(b) && b[i] == '.' {
		isInt = false
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return -1, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		isInt = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return -1, false
		}
	}
	return i, isInt
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasZero reports whether one of the eight bytes of x is zero.
func hasZero(x uint64) bool { return (x-lsb)&^x&msb != 0 }

// hasByte reports whether one of the eight bytes of x is c.
func hasByte(x uint64, c byte) bool { return hasZero(x ^ (lsb * uint64(c))) }

// hasLess reports whether one of the eight bytes of x is below n (n <= 128).
func hasLess(x uint64, n byte) bool { return (x-lsb*uint64(n))&^x&msb != 0 }

// scanString reads the JSON string whose opening quote is at b[start]: it returns the index
// of its closing quote, whether it holds escapes, and whether it holds bytes past ASCII. It
// reports false for a string that does not end, or holds a control character.
func scanString(b []byte, start int) (end int, escaped, nonASCII bool, ok bool) {
	i := start + 1
	for {
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			if hasByte(x, '"') || hasByte(x, '\\') || hasLess(x, 0x20) {
				break
			}
			if x&msb != 0 {
				nonASCII = true
			}
			i += 8
		}
		if i >= len(b) {
			return 0, false, false, false
		}
		switch c := b[i]; {
		case c == '"':
			return i, escaped, nonASCII, true
		case c == '\\':
			escaped = true
			i += 2
		case c < 0x20:
			return 0, false, false, false
		default:
			if c >= 0x80 {
				nonASCII = true
			}
			i++
		}
	}
}

// decodeString decodes the JSON string at b[i] and returns the index past it. It reports
// false for invalid UTF-8, which encoding/json replaces, and for a bad escape.
func decodeString(b []byte, i int) (string, int, bool) {
	end, escaped, nonASCII, ok := scanString(b, i)
	if !ok {
		return "", 0, false
	}
	raw := b[i+1 : end]
	if nonASCII && !utf8.Valid(raw) {
		return "", 0, false
	}
	if !escaped {
		return string(raw), end + 1, true
	}
	s, ok := unescape(raw)
	return s, end + 1, ok
}

// unescape decodes the escapes of a JSON string's contents as encoding/json does: a lone or
// ill-paired surrogate becomes U+FFFD.
func unescape(raw []byte) (string, bool) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		j := i
		for j < len(raw) && raw[j] != '\\' {
			j++
		}
		out = append(out, raw[i:j]...)
		if j >= len(raw) {
			break
		}
		if j+1 >= len(raw) {
			return "", false
		}
		i = j + 2
		switch raw[j+1] {
		case '"', '\\', '/':
			out = append(out, raw[j+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw, i)
			if !ok {
				return "", false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(-1), false
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2, ok = hex4(raw, i+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok && dec != unicode.ReplacementChar {
					r = dec
					i += 6
				} else {
					r = unicode.ReplacementChar
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return string(out), true
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// An encoder writes results of one type: a string, or a struct of plain fields. It is nil
// for any other type, which encoding/json encodes.
type encoder func(dst []byte, v reflect.Value) ([]byte, bool)

func encoderOf(t reflect.Type) encoder {
	if t.Kind() == reflect.String && plainKind(t) {
		return func(dst []byte, v reflect.Value) ([]byte, bool) {
			s := v.String()
			if dst == nil {
				dst = make([]byte, 0, len(s)+len(s)/16+2)
			}
			return appendString(dst, s), true
		}
	}
	fs := fieldsOf(t)
	if fs == nil {
		return nil
	}
	return fs.encode
}

func (fs fastFields) encode(dst []byte, v reflect.Value) ([]byte, bool) {
	if dst == nil {
		// Room for the whole object, so that it is allocated once: the strings, a little for
		// their escapes, and the names and numbers.
		n := 2
		for i := range fs {
			n += len(fs[i].quoted) + 24
			if fs[i].kind == reflect.String {
				l := v.Field(fs[i].index).Len()
				n += l + l/16
			}
		}
		dst = make([]byte, 0, n)
	}
	dst = append(dst, '{')
	first := true
	for i := range fs {
		f := &fs[i]
		fv := v.Field(f.index)
		if f.omitEmpty && fv.IsZero() {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, f.quoted...)
		switch f.kind {
		case reflect.String:
			dst = appendString(dst, fv.String())
		case reflect.Bool:
			dst = strconv.AppendBool(dst, fv.Bool())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			dst = strconv.AppendInt(dst, fv.Int(), 10)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			dst = strconv.AppendUint(dst, fv.Uint(), 10)
		default:
			// Floats: encoding/json's formatting (and its refusal of NaN) is its own.
			b, err := json.Marshal(fv.Interface())
			if err != nil {
				return nil, false
			}
			dst = append(dst, b...)
		}
	}
	return append(dst, '}'), true
}

// appendString appends s as a JSON string the way encoding/json writes it: <, > and & as
// \u escapes, U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip eight bytes at a time that need nothing.
		for i+8 <= len(s) {
			x := loadString(s, i)
			if x&msb != 0 || hasLess(x, 0x20) || hasByte(x, '"') || hasByte(x, '\\') ||
				hasByte(x, '<') || hasByte(x, '>') || hasByte(x, '&') {
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigit[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigit = "0123456789abcdef"

func loadString(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}
