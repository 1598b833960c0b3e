package jsonappend

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// same fails t unless Value(v) gives json.Marshal(v)'s bytes, or fails where it fails.
func same(t *testing.T, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	got, ok := Value([]byte("prefix"), v)
	if err != nil {
		if ok {
			t.Errorf("Value(%#v) = %s, but json.Marshal fails: %v", v, got, err)
		}
		return
	}
	if !ok {
		t.Errorf("Value(%#v) failed; json.Marshal gives %s", v, want)
		return
	}
	if !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Errorf("Value(%#v)\n got %s\nwant prefix%s", v, got, want)
	}
}

func TestValueIsMarshal(t *testing.T) {
	deep := any("leaf")
	for range 150 { // past maxDepth: handed to json.Marshal
		deep = []any{map[string]any{"k": deep}}
	}
	for _, v := range []any{
		nil, "", "plain", "<a href=\"x\">&amp;</a>", "tab\tnew\nline\r\u0001\u001f\\", "\u2028\u2029é漢🙂",
		string([]byte{0xff, 'a', 0xc3}), true, false,
		0.0, math.Copysign(0, -1), 1.0, -1.5, 0.1, 1e20, 1e21, 1e-6, 1e-7, 123456789.0, 1 << 53, float32(0.1), float32(1e21),
		math.NaN(), math.Inf(1), float32(math.Inf(-1)),
		int(-7), int8(-8), int16(16), int32(32), int64(math.MinInt64), uint(7), uint8(8), uint16(16), uint32(32), uint64(math.MaxUint64), uintptr(9),
		json.Number("12.5e-3"), json.Number(""), json.Number("01"), json.Number("1e"),
		json.RawMessage(` { "a" : [1, 2, "x y < z"] } `), json.RawMessage(nil), json.RawMessage(`{`), json.RawMessage(``),
		map[string]any{"b": 1.0, "a": []any{"x", nil, map[string]any{}}, "<": "&"}, map[string]any(nil), map[string]any{},
		[]any(nil), []any{}, []string{"a", "<b>"}, []string(nil), map[string]string{"z": "1", "a": "2"}, map[string]string(nil),
		time.Date(2026, 11, 30, 23, 54, 12, 123, time.UTC), struct{ A int }{1}, map[string]any{"f": math.NaN()},
		deep,
	} {
		same(t, v)
	}
}

// TestStringEveryByte: a string of plain letters with any one byte, or any two, at any place
// is written as json.Marshal writes it.
func TestStringEveryByte(t *testing.T) {
	for c := range 256 {
		for at := range 17 {
			b := []byte("abcdefghijklmnopq")
			b[at] = byte(c)
			same(t, string(b))
			same(t, string(b[:at+1]))
			b[16-at] = byte(255 - c)
			same(t, string(b))
		}
	}
}

// TestTimeIsMarshal: a time is written as its MarshalJSON writes it, in UTC and other zones
// 0 hours from it (written without AppendFormat) and in other zones, with every length of fraction, at the ends of
// the years JSON allows, and past them (where both fail).
func TestTimeIsMarshal(t *testing.T) {
	east := time.FixedZone("east", 5*3600+30*60)
	zero := time.FixedZone("zero", 0)
	far := time.FixedZone("far", 25*3600)
	ns := []int{0, 1, 10, 120, 123456789, 100000000, 999999999, 500, 7000}
	var times []time.Time
	for _, y := range []int{0, 1, 9, 99, 999, 1970, 2026, 9999, -1, 10000} {
		for i, n := range ns {
			times = append(times, time.Date(y, time.Month(1+i%12), 1+i*3, i, 59-i, i*7%60, n, time.UTC))
		}
	}
	for i := range 2000 {
		times = append(times, time.Unix(int64(i)*7919*86400+int64(i)*13, int64(i)*4999999%1e9).UTC())
	}
	var more []time.Time
	for _, tm := range times {
		more = append(more, tm, tm.In(east), tm.In(zero), tm.In(far), tm.Local())
	}
	for _, tm := range more {
		want, err := tm.MarshalJSON()
		got, ok := Time([]byte("prefix"), tm)
		switch {
		case err != nil && ok:
			t.Errorf("Time(%v) = %s, but MarshalJSON fails: %v", tm, got, err)
		case err == nil && !ok:
			t.Errorf("Time(%v) failed; MarshalJSON gives %s", tm, want)
		case err == nil && !bytes.Equal(got, append([]byte("prefix"), want...)):
			t.Errorf("Time(%v)\n got %s\nwant prefix%s", tm, got, want)
		}
	}
}

// FuzzValue: any JSON value, decoded as encoding/json decodes it (and with numbers kept as
// json.Number), is written as json.Marshal writes it.
func FuzzValue(f *testing.F) {
	for _, s := range []string{`null`, `"a<b"`, `{"x":[1,2.5e30,-0,"\u2028"],"a":{}}`, `[true,false,null]`, `1e-7`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) == nil {
			same(t, v)
		}
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var n any
		if d.Decode(&n) == nil {
			same(t, n)
		}
		same(t, string(data))
		same(t, json.RawMessage(data))
	})
}
