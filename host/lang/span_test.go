package lang

import "testing"

func TestTokenSpan(t *testing.T) {
	src := "\xEF\xBB\xBFtool Ä : X()\r\nagent A [openai/gpt-4o, temp: 0.5]\r  |> F.`files.read`(\"a\\\"b\")  # c\n"
	x := NewLineIndex([]byte(src))
	for _, tt := range []struct {
		line, col int
		want      string
	}{
		{1, 1, "tool"},
		{1, 6, "Ä"},
		{1, 8, ":"},
		{2, 10, "openai/gpt-4o"},
		{2, 31, "0.5"},
		{3, 3, "|>"},
		{3, 8, "`files.read`"},
		{3, 21, `"a\"b"`},
		{3, 28, ""}, // a space
		{3, 30, ""}, // a comment
		{3, 99, ""}, // past the line's end
	} {
		start, end, ok := x.TokenSpan([]byte(src), tt.line, tt.col)
		if !ok {
			t.Fatalf("%d:%d: not ok", tt.line, tt.col)
		}
		if got := src[start.Offset:end.Offset]; got != tt.want {
			t.Errorf("%d:%d: span %q, want %q", tt.line, tt.col, got, tt.want)
		}
		if back := x.Location([]byte(src), start.Offset); back != start {
			t.Errorf("%d:%d: Location(%d) = %+v, want %+v", tt.line, tt.col, start.Offset, back, start)
		}
	}
	if _, _, ok := x.TokenSpan([]byte(src), 9, 1); ok {
		t.Error("line 9 of a 4-line text is ok")
	}
}
