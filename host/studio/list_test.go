package studio_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/runtime"
)

// saved stores n finished runs of Greet, a minute apart (the newest last), the i-th with the
// name "name-i", a cost of i cents and, every tenth, a violation.
func saved(t *testing.T, e *env, n int, t0 time.Time) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%02x%030d", i, i)
		rec := &runtime.Record{RunID: id, Pipeline: "Greet", File: "flows.halo", Status: runtime.Completed,
			Inputs: map[string]any{"name": fmt.Sprintf("name-%d", i)}, Output: "hi", Data: map[string]any{},
			Started: t0.Add(time.Duration(i) * time.Minute), Updated: t0.Add(time.Duration(i)*time.Minute + time.Second)}
		rec.Meta.RunID, rec.Meta.Cost = id, float64(i)/100
		if i%10 == 0 {
			rec.Meta.Violations = []runtime.ViolationInfo{{Policy: "P", Rule: "Block"}}
		}
		if err := e.store.Save(rec); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

var rowRe = regexp.MustCompile(`<tr class="run[^"]*" data-run="([0-9a-f]+)"`)

func rowsOf(body string) []string {
	var ids []string
	for _, m := range rowRe.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// TestListSearch: the runs list searches words of inputs and a run id's beginning, filters by
// status, pipeline, days, violations and cost, each kept in the address, in the form and in
// the next page's link; the footer totals what the rows shown cost; a bad date or cost is
// refused with a code.
func TestListSearch(t *testing.T) {
	e := newEnv(t, opts{})
	c := e.client()
	t0 := time.Date(2026, 11, 28, 23, 0, 0, 0, time.UTC)
	ids := saved(t, e, 120, t0) // from 23:00 on the 28th to 00:59 on the 29th
	get := func(q string) (int, string) {
		t.Helper()
		st, body, _ := e.page(c, "GET", "/?"+q, nil)
		return st, body
	}

	// Paging: 50 a page, newest first, every run once, the filter kept in the link.
	seen := map[string]bool{}
	next := "/?violations=1"
	pages := 0
	for next != "" {
		st, body, _ := e.page(c, "GET", strings.ReplaceAll(next, "&amp;", "&"), nil)
		if st != 200 {
			t.Fatalf("%s: %d\n%s", next, st, body)
		}
		for _, id := range rowsOf(body) {
			if seen[id] {
				t.Errorf("run %s on two pages", id)
			}
			seen[id] = true
		}
		pages++
		m := regexp.MustCompile(`<a href="(/\?[^"]+)" rel="next">`).FindStringSubmatch(body)
		next = ""
		if m != nil {
			next = m[1]
			if !strings.Contains(next, "violations=1") || !strings.Contains(next, "cursor=") {
				t.Errorf("the next page's link drops the filter: %s", next)
			}
		}
	}
	if len(seen) != 12 || pages != 1 {
		t.Errorf("with violations: %d runs on %d pages, want 12 on 1", len(seen), pages)
	}
	seen, pages, next = map[string]bool{}, 0, "/"
	for next != "" && pages < 5 {
		_, body, _ := e.page(c, "GET", strings.ReplaceAll(next, "&amp;", "&"), nil)
		for _, id := range rowsOf(body) {
			seen[id] = true
		}
		pages++
		next = ""
		if m := regexp.MustCompile(`<a href="(/\?[^"]+)" rel="next">`).FindStringSubmatch(body); m != nil {
			next = m[1]
		}
	}
	if len(seen) != 120 || pages != 3 {
		t.Errorf("all: %d runs on %d pages, want 120 on 3", len(seen), pages)
	}

	for _, tc := range []struct {
		name, q string
		want    []string
	}{
		{"words of the inputs", "q=" + url.QueryEscape("NAME-7\""), []string{ids[7]}},
		{"a run id's beginning", "q=" + ids[42][:8], []string{ids[42]}},
		{"a day", "since=2026-11-29&until=2026-11-29&q=name-6", []string{ids[69], ids[68], ids[67], ids[66], ids[65], ids[64], ids[63], ids[62], ids[61], ids[60]}},
		{"a cost above", "mincost=%241.17", []string{ids[119], ids[118]}},
		{"violations and a cost above", "violations=1&mincost=0.95", []string{ids[110], ids[100]}},
		{"status and pipeline", "status=failed&pipeline=Greet", nil},
	} {
		st, body := get(tc.q)
		if got := rowsOf(body); st != 200 || strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s (%s): %d %v, want %v", tc.name, tc.q, st, got, tc.want)
		}
		if tc.want == nil && !strings.Contains(body, "No runs match") {
			t.Errorf("%s: no 'No runs match'", tc.name)
		}
	}

	// The form shows the filter the address holds; the footer totals the rows' cost.
	_, body := get("q=name-11&since=2026-11-28&mincost=0.5&violations=1")
	for _, want := range []string{`id="q" name="q" value="name-11"`, `id="since" name="since" value="2026-11-28"`, `id="mincost" name="mincost" value="0.5"`, `name="violations" value="1" checked`, `<a href="/">Show all</a>`,
		`data-live-list="/live?mincost=0.5&amp;q=name-11&amp;since=2026-11-28&amp;violations=1"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the filtered page does not hold %s", want)
		}
	}
	_, body = get("q=name-11")
	if !strings.Contains(body, "11 runs shown") || !strings.Contains(body, `class="total">$11.5600<`) { // name-11, name-110 … name-119
		t.Errorf("the totals of name-11:\n%s", body)
	}
	_, body = get("q=name-0")
	if !strings.Contains(body, "1 run shown") || !strings.Contains(body, `class="total">$0.0000<`) {
		t.Errorf("a run that cost nothing is not $0.0000")
	}

	for _, q := range []string{"since=yesterday", "until=2026-13-01", "mincost=lots", "mincost=-1", "mincost=NaN", "q=" + strings.Repeat("w+", 17)} {
		st, body := get(q)
		if st != http.StatusBadRequest || !strings.Contains(body, "BAD_") {
			t.Errorf("?%s: %d\n%s", q, st, body)
		}
	}
}

// TestListSearchEscaped: what a search reflects into the page (the form's value, the links
// of the next page and of the live list, the problem of a bad date) is text, never markup.
func TestListSearchEscaped(t *testing.T) {
	e := newEnv(t, opts{})
	c := e.client()
	saved(t, e, 60, time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	attack := `"><script>alert(1)</script><img src=x onerror=alert(2)>`
	for _, q := range []string{
		"q=" + url.QueryEscape(attack),
		"pipeline=" + url.QueryEscape(attack),
		"status=" + url.QueryEscape(attack),
		"since=" + url.QueryEscape(attack),
		"mincost=" + url.QueryEscape(attack),
		"violations=" + url.QueryEscape(attack),
		"q=name&mincost=" + url.QueryEscape("0\"><b>x</b>"),
	} {
		_, body, _ := e.page(c, "GET", "/?"+q, nil)
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") || strings.Contains(body, "<b>x</b>") {
			t.Errorf("?%s reaches the page as markup:\n%s", q, body)
		}
	}
}

// TestListTokensAndUnknownCost: each row shows its run's tokens in and out, a run of a model
// whose price is unknown costs "—" (not $0.0000), and the footer's total says it is at least
// what the known prices make, with the tokens of the rows shown.
func TestListTokensAndUnknownCost(t *testing.T) {
	e := newEnv(t, opts{})
	c := e.client()
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for i, calls := range [][]runtime.CallInfo{
		{{Kind: "llm", Target: "A.t", Model: "openai/gpt-4o", Usage: &model.Usage{InputTokens: 1000, OutputTokens: 300}, Cost: 0.25}},
		{{Kind: "llm", Target: "A.t", Model: "openai/some-new-model", Usage: &model.Usage{InputTokens: 200, OutputTokens: 45}, Unpriced: true}},
		nil,
	} {
		id := fmt.Sprintf("tok%d", i)
		rec := &runtime.Record{RunID: id, Pipeline: "Greet", Status: runtime.Completed, Inputs: map[string]any{}, Data: map[string]any{},
			Started: t0.Add(time.Duration(i) * time.Minute), Updated: t0.Add(time.Duration(i) * time.Minute)}
		rec.Meta.RunID, rec.Meta.Calls = id, calls
		for _, ci := range calls {
			rec.Meta.Cost += ci.Cost
		}
		if err := e.store.Save(rec); err != nil {
			t.Fatal(err)
		}
	}
	_, body, _ := e.page(c, "GET", "/", nil)
	cell := func(id, label string) string {
		t.Helper()
		m := regexp.MustCompile(`(?s)data-run="` + id + `".*?<td data-label="` + label + `">([^<]*)</td>`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no %s cell for %s:\n%s", label, id, body)
		}
		return m[1]
	}
	for _, tc := range []struct{ id, tokens, cost string }{
		{"tok0", "1000 in, 300 out", "$0.2500"},
		{"tok1", "200 in, 45 out", "—"},
		{"tok2", "", "$0.0000"},
	} {
		if got := cell(tc.id, "Tokens"); got != tc.tokens {
			t.Errorf("%s tokens %q, want %q", tc.id, got, tc.tokens)
		}
		if got := cell(tc.id, "Cost"); got != tc.cost {
			t.Errorf("%s cost %q, want %q", tc.id, got, tc.cost)
		}
	}
	if !strings.Contains(body, `class="tokens-total">1200 in, 345 out<`) || !strings.Contains(body, `class="total">≥ $0.2500<`) {
		t.Errorf("the footer does not total 1200 in, 345 out and ≥ $0.2500:\n%s", body)
	}
	_, body, _ = e.page(c, "GET", "/?q=tok0", nil)
	if !strings.Contains(body, `class="total">$0.2500<`) {
		t.Errorf("the total of priced runs alone is not exact:\n%s", body)
	}
}

// TestSearchFindsRunsSavedSinceTheLastSearch: the saves leave the text index to the next
// search (host/runstore), and a search finds the runs saved since the one before it as well
// as those it found then.
func TestSearchFindsRunsSavedSinceTheLastSearch(t *testing.T) {
	e := newEnv(t, opts{})
	c := e.client()
	t0 := time.Date(2026, 11, 28, 23, 0, 0, 0, time.UTC)
	set := func(ids []string) string {
		ids = append([]string(nil), ids...)
		sort.Strings(ids)
		return strings.Join(ids, " ")
	}
	search := func(q string) string {
		t.Helper()
		st, body, _ := e.page(c, "GET", "/?q="+url.QueryEscape(q), nil)
		if st != 200 {
			t.Fatalf("%s: %d\n%s", q, st, body)
		}
		return set(rowsOf(body))
	}
	ids := saved(t, e, 30, t0)
	if got, want := search("name-1"), set(append([]string{ids[1]}, ids[10:20]...)); got != want {
		t.Fatalf("name-1 before: %s, want %s", got, want)
	}
	ids = saved(t, e, 130, t0) // the same 30 again, and 100 more
	if got, want := search("name-12"), set(append([]string{ids[12]}, ids[120:130]...)); got != want {
		t.Errorf("name-12 after: %s, want %s", got, want)
	}
}
