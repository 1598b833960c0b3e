package policy

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"halolang.dev/halo/host/policy/detect"
	"halolang.dev/halo/host/policy/internal/corpus"
)

// detects reports whether the policy engine finds cat in text, as an agent's prompt: a Block
// rule fails, or (IPAddress, which only Redact takes) a Redact rule changes the text.
func detects(t testing.TB, cat, text string) bool {
	c, ok := detect.Parse(cat)
	if !ok {
		t.Fatalf("corpus names an unknown category %q", cat)
	}
	if c&detect.Blockable == c {
		_, err := Set{MustCompile("B", []RuleSpec{{Name: "Block", Args: []any{Ident(cat)}}})}.Input(text)
		return err != nil
	}
	out, _ := Set{MustCompile("R", []RuleSpec{{Name: "Redact", Args: []any{Ident(cat)}}})}.Input(text)
	return out != text
}

// TestCorpus measures detection and false positives on the labelled corpus (issue 12 item
// 2: detection at least 98%, false positives at most 1%) and lists every case it gets wrong.
func TestCorpus(t *testing.T) {
	type tally struct{ pos, hit, neg, fp int }
	byCat := map[string]*tally{}
	byForm := map[string]*tally{}
	var all tally
	cases := corpus.Cases()
	for _, c := range cases {
		got := detects(t, c.Cat, c.Text)
		for _, tl := range []*tally{&all, get(byCat, c.Cat), get(byForm, c.Form)} {
			if c.Hit {
				tl.pos++
				if got {
					tl.hit++
				}
			} else {
				tl.neg++
				if got {
					tl.fp++
				}
			}
		}
		if got != c.Hit {
			what := "missed"
			if got {
				what = "false positive"
			}
			t.Logf("%s %s (%s): %q", c.Cat, what, c.Form, c.Text)
		}
	}
	report := func(name string, tl *tally) string {
		return fmt.Sprintf("%-16s detection %3d/%3d %6.2f%%   false positives %2d/%3d %5.2f%%", name,
			tl.hit, tl.pos, pct(tl.hit, tl.pos), tl.fp, tl.neg, pct(tl.fp, tl.neg))
	}
	var lines []string
	for _, m := range []map[string]*tally{byCat, byForm} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			lines = append(lines, report(k, m[k]))
		}
	}
	lines = append(lines, report(fmt.Sprintf("all %d cases", len(cases)), &all))
	t.Log("\n" + strings.Join(lines, "\n"))
	if d := pct(all.hit, all.pos); d < 98 {
		t.Errorf("detection %.2f%%, want at least 98%%", d)
	}
	if fp := pct(all.fp, all.neg); fp > 1 {
		t.Errorf("false positives %.2f%%, want at most 1%%", fp)
	}
}

func get[T any](m map[string]*T, k string) *T {
	if m[k] == nil {
		m[k] = new(T)
	}
	return m[k]
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}
