package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type ctxMap map[string]any

func (c ctxMap) Lookup(path string) (any, bool) { v, ok := c[path]; return v, ok }

func TestOutput(t *testing.T) {
	ctx := ctxMap{"context.data.request.limit": json.Number("100"), "context.data.flag": true}
	tests := []struct {
		name   string
		rules  []RuleSpec
		answer Answer
		ok     bool
		text   string // the returned text, when ok and not ""
	}{
		{"max words ok", []RuleSpec{r("MaxWords", 3.0)}, Answer{Text: "one two  three"}, true, ""},
		{"max words over", []RuleSpec{r("MaxWords", 3.0)}, Answer{Text: "one two three four"}, false, ""},
		{"max chars counts runes", []RuleSpec{r("MaxChars", 3.0)}, Answer{Text: "héé"}, true, ""},
		{"max chars over", []RuleSpec{r("MaxChars", 3.0)}, Answer{Text: "abcd"}, false, ""},
		{"max tokens reported", []RuleSpec{r("MaxTokens", 10.0)}, Answer{Text: "x", CompletionTokens: 11}, false, ""},
		{"max tokens not reported", []RuleSpec{r("MaxTokens", 10.0)}, Answer{Text: "x"}, true, ""},
		{"json plain", []RuleSpec{r("Require", Ident("JSON"))}, Answer{Text: ` {"a": 1} `}, true, `{"a": 1}`},
		{"json in prose", []RuleSpec{r("Require", Ident("JSON"))}, Answer{Text: `Sure! Here it is: {"a": [1, 2]} Hope that helps.`}, true, `{"a": [1, 2]}`},
		{"json in fence", []RuleSpec{r("Enforce", Ident("JSON"))}, Answer{Text: "Here:\n```json\n{\"ok\": true}\n```\nDone."}, true, `{"ok": true}`},
		{"json brace in prose before", []RuleSpec{r("Require", Ident("JSON"))}, Answer{Text: `Use {braces} like {"a": 1}`}, true, `{"a": 1}`},
		{"not json", []RuleSpec{r("Require", Ident("JSON"))}, Answer{Text: "no json here {oops"}, false, ""},
		{"xml ok", []RuleSpec{r("Require", Ident("XML"))}, Answer{Text: "<a><b x=\"1\">t</b></a>"}, true, ""},
		{"xml fenced", []RuleSpec{r("Require", Ident("XML"))}, Answer{Text: "```xml\n<a/>\n```"}, true, ""},
		{"xml broken", []RuleSpec{r("Require", Ident("XML"))}, Answer{Text: "<a><b></a>"}, false, ""},
		{"xml two roots", []RuleSpec{r("Require", Ident("XML"))}, Answer{Text: "<a/><b/>"}, false, ""},
		{"xml prose", []RuleSpec{r("Require", Ident("XML"))}, Answer{Text: "hello"}, false, ""},
		{"citation number", []RuleSpec{r("Require", Ident("Citation"))}, Answer{Text: "It rains [1]."}, true, ""},
		{"citation id", []RuleSpec{r("Require", Ident("Citation"))}, Answer{Text: "See [doc_42]."}, true, ""},
		{"no citation", []RuleSpec{r("Require", Ident("Citation"))}, Answer{Text: "Trust me."}, false, ""},
		{"match regex", []RuleSpec{r("MatchRegex", `^\d+$`)}, Answer{Text: "42"}, true, ""},
		{"match regex end is end of text", []RuleSpec{r("MatchRegex", `^\d+$`)}, Answer{Text: "42\n"}, false, ""},
		{"match regex fails", []RuleSpec{r("MatchRegex", `^\d+$`)}, Answer{Text: "forty"}, false, ""},
		{"validate context ok", []RuleSpec{r("Validate", "amount", "<=", "context.data.request.limit")}, Answer{Text: `{"amount": 40}`}, true, ""},
		{"validate context over", []RuleSpec{r("Validate", "amount", "<=", "context.data.request.limit")}, Answer{Text: `{"amount": 140}`}, false, ""},
		{"validate string number", []RuleSpec{r("Validate", "amount", "==", 4.0)}, Answer{Text: `{"amount": "4"}`}, true, ""},
		{"validate true is no number", []RuleSpec{r("Validate", "amount", "<", 4.0)}, Answer{Text: `{"amount": true}`}, false, ""},
		{"validate empty string is no number", []RuleSpec{r("Validate", "amount", ">", 4.0)}, Answer{Text: `{"amount": ""}`}, false, ""},
		{"validate list is no number", []RuleSpec{r("Validate", "amount", ">=", 0.0)}, Answer{Text: `{"amount": []}`}, false, ""},
		{"validate string equality", []RuleSpec{r("Validate", "status", "==", "ok")}, Answer{Text: `{"status": "ok"}`}, true, ""},
		{"validate not equal", []RuleSpec{r("Validate", "status", "!=", "ok")}, Answer{Text: `{"status": "ok"}`}, false, ""},
		{"validate nested", []RuleSpec{r("Validate", "refund.items.0.qty", ">", 1.0)}, Answer{Text: `{"refund": {"items": [{"qty": 2}]}}`}, true, ""},
		{"validate missing field", []RuleSpec{r("Validate", "amount", "==", 1.0)}, Answer{Text: `{"other": 1}`}, false, ""},
		{"validate missing context", []RuleSpec{r("Validate", "amount", "==", "context.data.nope")}, Answer{Text: `{"amount": 1}`}, false, ""},
		{"validate bool context", []RuleSpec{r("Validate", "ok", "==", "context.data.flag")}, Answer{Text: `{"ok": true}`}, true, ""},
		{"validate not json", []RuleSpec{r("Validate", "amount", "==", 1.0)}, Answer{Text: `amount is 1`}, false, ""},
		{"redact then words", []RuleSpec{r("Redact", Ident("Email")), r("MaxWords", 2.0)}, Answer{Text: "mail jane@example.com"}, true, "mail [REDACTED:Email]"},
		{"block answer", []RuleSpec{r("Block", Ident("Markdown"))}, Answer{Text: "# Title\ntext"}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := set(t, tt.rules).Output(tt.answer, ctx)
			if tt.ok != (err == nil) {
				t.Fatalf("Output err = %v, want ok=%v", err, tt.ok)
			}
			if err != nil {
				var v *Violation
				if !errors.As(err, &v) || v.Phase != Output || v.Policy != "P1" || v.Rule != tt.rules[len(tt.rules)-1].Name {
					t.Fatalf("violation %#v", err)
				}
				return
			}
			if tt.text != "" && res.Text != tt.text {
				t.Fatalf("Text = %q, want %q", res.Text, tt.text)
			}
		})
	}
}

func TestEnforceJSONReturnsValue(t *testing.T) {
	s := set(t, []RuleSpec{r("Enforce", Ident("JSON"))})
	res, err := s.Output(Answer{Text: "Result: {\"amount\": 12.5}"}, nil)
	if err != nil || !res.IsJSON {
		t.Fatal(err)
	}
	if m, ok := res.JSON.(map[string]any); !ok || m["amount"] != json.Number("12.5") {
		t.Fatalf("JSON = %#v", res.JSON)
	}
}

func TestLimits(t *testing.T) {
	s := set(t, []RuleSpec{r("MaxSpend", 0.5), r("MaxTokens", 300.0)}, []RuleSpec{r("MaxSpend", 0.25)})
	if l, ok := s.SpendLimit(); !ok || l != 0.25 {
		t.Errorf("SpendLimit = %v %v", l, ok)
	}
	if n, ok := s.TokenLimit(); !ok || n != 300 {
		t.Errorf("TokenLimit = %v %v", n, ok)
	}
	if _, ok := (Set{}).SpendLimit(); ok {
		t.Error("empty set has a limit")
	}
	if !strings.Contains(set(t, []RuleSpec{r("MaxWords", 1.0)})[0].rules[0].text(), "MaxWords(1)") {
		t.Error("rule text")
	}
}
