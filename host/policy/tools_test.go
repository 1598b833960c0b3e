package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
)

func TestMatchPattern(t *testing.T) {
	tests := []struct {
		pattern, target string
		want            bool
	}{
		{"Repo", "Repo.create_pr", true},
		{"Repo", "Repos.create_pr", false},
		{"Repo.create_pr", "Repo.create_pr", true},
		{"Repo.create_pr", "Repo.merge", false},
		{"Repo.*", "Repo.merge", true},
		{"Repo.*", "Other.merge", false},
		{"*.delete", "Files.delete", true},
		{"*.delete", "Files.read", false},
		{"*", "Anything.at_all", true},
		{"Re*", "Repo.x", true},
		{"*.del*", "Files.delete_all", true},
		{"*", "Repo", true},
		{"*.x", "Repo", false},
		// Issue 11 item 16: MCP method names may hold dots; * after the tool name matches
		// any method name.
		{"Git.*", "Git.delete.repo", true},
		{"Git", "Git.delete.repo", true},
		{"Git.delete.repo", "Git.delete.repo", true},
		{"Git.delete", "Git.delete.repo", false},
		{"Git.delete.*", "Git.delete.repo", true},
		{"Git.del*", "Git.delete.repo", true},
		{"*.repo", "Git.delete.repo", false}, // the method is "delete.repo"
		{"*.delete.repo", "Git.delete.repo", true},
		{"Gi*", "Git.delete.repo", true},
		{"G*.x", "Git.a.x", false},
		{"Git.*", "Gitx.delete", false},
		{"Git.*", "Git", false},
	}
	for _, tt := range tests {
		if got := MatchPattern(tt.pattern, tt.target); got != tt.want {
			t.Errorf("MatchPattern(%q, %q) = %v", tt.pattern, tt.target, got)
		}
		// A pattern with a method part matches as its two parts do (host/check asks so).
		pt, pm, hasDot := strings.Cut(tt.pattern, ".")
		tool, method, hasMethod := strings.Cut(tt.target, ".")
		if hasDot && hasMethod {
			if got := MatchPart(pt, tool) && MatchPart(pm, method); got != tt.want {
				t.Errorf("MatchPart on the parts of %q, %q = %v", tt.pattern, tt.target, got)
			}
		}
	}
}

var methods = []ToolMethod{
	{"Code.read", tool.Read},
	{"Code.write", tool.Write},
	{"Code.delete", tool.Write},
	{"Code.run", tool.External},
	{"Tests.run", tool.External},
	{"Web.fetch", ""}, // no effect declared: external
}

func targets(ms []ToolMethod) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Target)
	}
	return strings.Join(out, " ")
}

func TestOffered(t *testing.T) {
	tests := []struct {
		name     string
		policies [][]RuleSpec
		want     string
	}{
		{"no rules", nil, "Code.read Code.write Code.delete Code.run Tests.run Web.fetch"},
		{"allow and deny", [][]RuleSpec{{r("AllowTools", "Code.*", "Tests.run"), r("DenyTools", "Code.delete")}},
			"Code.read Code.write Code.run Tests.run"},
		{"several allows narrow", [][]RuleSpec{{r("AllowTools", "Code")}, {r("AllowTools", "*.read", "*.run")}},
			"Code.read Code.run"},
		{"effects", [][]RuleSpec{{r("AllowEffects", Ident("read"), Ident("write"))}},
			"Code.read Code.write Code.delete"},
		{"missing effect is external", [][]RuleSpec{{r("AllowEffects", Ident("external"))}},
			"Code.run Tests.run Web.fetch"},
		{"deny args hides nothing", [][]RuleSpec{{r("DenyArgs", "*", "x")}},
			"Code.read Code.write Code.delete Code.run Tests.run Web.fetch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := set(t, tt.policies...).Offered(methods)
			if err != nil || targets(got) != tt.want {
				t.Fatalf("Offered = %q, %v; want %q", targets(got), err, tt.want)
			}
		})
	}
	_, err := set(t, []RuleSpec{r("AllowTools", "Code.*")}, []RuleSpec{r("AllowTools", "Tests.*")}).Offered(methods)
	if errcode.Code(err) != tool.CodeToolConfig {
		t.Fatalf("none allowed: err = %v", err)
	}
}

func TestDecide(t *testing.T) {
	fixer := []RuleSpec{
		r("AllowTools", "Code.*", "Tests.run"),
		r("DenyTools", "Code.delete"),
		r("DenyArgs", "Code.write", "path", `\.test\.`),
		r("DenyArgs", "Tests.run", "command", `^(?!bun test[\w ./-]*$)`),
		r("ApproveEffects", Ident("external")),
	}
	tests := []struct {
		name     string
		policies [][]RuleSpec
		target   string
		effect   tool.Effect
		args     string
		verdict  Verdict
		rule     string
	}{
		{"allowed read", [][]RuleSpec{fixer}, "Code.read", tool.Read, `{"path":"a.ts"}`, Allowed, ""},
		{"hidden by allow", [][]RuleSpec{fixer}, "Web.fetch", tool.External, `{}`, Refused, "AllowTools"},
		{"hidden by deny", [][]RuleSpec{fixer}, "Code.delete", tool.Write, `{"path":"a"}`, Refused, "DenyTools"},
		{"deny args named", [][]RuleSpec{fixer}, "Code.write", tool.Write, `{"path":"src/a.test.ts","content":"x"}`, Refused, "DenyArgs"},
		{"deny args case-insensitive", [][]RuleSpec{fixer}, "Code.write", tool.Write, `{"path":"src/A.TEST.ts"}`, Refused, "DenyArgs"},
		{"deny args other path", [][]RuleSpec{fixer}, "Code.write", tool.Write, `{"path":"src/a.ts"}`, Allowed, ""},
		{"bun test approved path", [][]RuleSpec{fixer}, "Tests.run", tool.External, `{"command":"bun test acceptance.test.ts"}`, NeedsApproval, "ApproveEffects"},
		{"bun test then newline", [][]RuleSpec{fixer}, "Tests.run", tool.External, `{"command":"bun test\n"}`, Refused, "DenyArgs"},
		{"bun test second line", [][]RuleSpec{fixer}, "Tests.run", tool.External, `{"command":"bun test\nrm -rf ."}`, Refused, "DenyArgs"},
		{"bun test with pipe", [][]RuleSpec{fixer}, "Tests.run", tool.External, `{"command":"bun test | sh"}`, Refused, "DenyArgs"},
		{"missing arg counts as empty", [][]RuleSpec{fixer}, "Tests.run", tool.External, `{}`, Refused, "DenyArgs"},
		{"refusal before approval", [][]RuleSpec{fixer}, "Tests.run", tool.External, `{"command":"curl x"}`, Refused, "DenyArgs"},
		{"effect look-alike escape", [][]RuleSpec{{r("DenyArgs", "*", `rm -rf`)}}, "Bash.run", tool.External, `{"cmd":"rm \\u002drf /"}`, Refused, "DenyArgs"},
		{"folded look-alikes", [][]RuleSpec{{r("DenyArgs", "*", `rm -rf`)}}, "Bash.run", tool.External, `{"cmd":"ｒｍ —ｒｆ /"}`, Refused, "DenyArgs"},
		{"any depth", [][]RuleSpec{{r("DenyArgs", "*", `^secret$`)}}, "X.y", tool.Read, `{"a":{"b":[1,"SECRET"]}}`, Refused, "DenyArgs"},
		{"numbers checked", [][]RuleSpec{{r("DenyArgs", "*", `^42$`)}}, "X.y", tool.Read, `{"n":42}`, Refused, "DenyArgs"},
		{"booleans checked", [][]RuleSpec{{r("DenyArgs", "*", `^true$`)}}, "X.y", tool.Read, `{"force":true}`, Refused, "DenyArgs"},
		{"keys not values", [][]RuleSpec{{r("DenyArgs", "*", `^danger$`)}}, "X.y", tool.Read, `{"danger":"ok"}`, Allowed, ""},
		{"values checked one at a time", [][]RuleSpec{{r("DenyArgs", "*", `a.*b`)}}, "X.y", tool.Read, `{"x":"a","y":"b"}`, Allowed, ""},
		{"pattern scopes deny args", [][]RuleSpec{{r("DenyArgs", "Other.*", `.`)}}, "X.y", tool.Read, `{"x":"a"}`, Allowed, ""},
		{"named arg nested", [][]RuleSpec{{r("DenyArgs", "*", "opts", `force`)}}, "X.y", tool.Read, `{"opts":{"mode":"force"}}`, Refused, "DenyArgs"},
		{"bad json refused", [][]RuleSpec{{r("DenyArgs", "*", `x`)}}, "X.y", tool.Read, `{oops`, Refused, "DenyArgs"},
		// Issue 27 item 1: a key given twice hides its first value from a reader that keeps
		// the last (null reads as missing), while the tool's decoder runs the first.
		{"duplicate key named", [][]RuleSpec{{r("DenyArgs", "Sh.run", "command", `touch|rm `)}}, "Sh.run", tool.External, `{"command":"touch PWN","command":null}`, Refused, "DenyArgs"},
		{"duplicate key any value", [][]RuleSpec{{r("DenyArgs", "*", `PWN`)}}, "Sh.run", tool.External, `{"command":"touch PWN","command":null}`, Refused, "DenyArgs"},
		{"duplicate key nested", [][]RuleSpec{{r("DenyArgs", "Code.write", "path", `\.test\.`)}}, "Code.write", tool.Write, `{"path":"a.ts","opts":{"path":"a.test.ts","path":null}}`, Refused, "DenyArgs"},
		{"key in another case", [][]RuleSpec{{r("DenyArgs", "Sh.run", "command", `touch`)}}, "Sh.run", tool.External, `{"command":"ls","COMMAND":"touch PWN"}`, Refused, "DenyArgs"},
		{"approve tools", [][]RuleSpec{{r("ApproveTools", "*.delete")}}, "Files.delete", tool.Write, `{}`, NeedsApproval, "ApproveTools"},
		{"empty effect approves as external", [][]RuleSpec{{r("ApproveEffects", Ident("external"))}}, "Web.fetch", "", `{}`, NeedsApproval, "ApproveEffects"},
		{"allow effects refuses called hidden", [][]RuleSpec{{r("AllowEffects", Ident("read"))}}, "Code.run", tool.External, `{}`, Refused, "AllowEffects"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := set(t, tt.policies...).Decide(tt.target, tt.effect, json.RawMessage(tt.args))
			if d.Verdict != tt.verdict || d.Rule != tt.rule {
				t.Fatalf("Decide = %v %s (%s), want %v %s", d.Verdict, d.Rule, d.Reason, tt.verdict, tt.rule)
			}
			v := d.Violation()
			if (tt.verdict == Refused) != (v != nil) {
				t.Fatalf("Violation() = %v", v)
			}
			if v != nil && (v.Phase != ToolPhase || v.Policy != "P1" || v.Message == "") {
				t.Fatalf("violation %+v", v)
			}
		})
	}
}

// A hostile pattern cannot hang a call: the match times out and the call is refused.
func TestDenyArgsTimeout(t *testing.T) {
	s := set(t, []RuleSpec{r("DenyArgs", "*", `^(a+)+$`)})
	d := s.Decide("X.y", tool.Read, json.RawMessage(`{"v":"`+strings.Repeat("a", 40)+`!"}`))
	if d.Verdict != Refused || !strings.Contains(d.Reason, "too long") {
		t.Fatalf("Decide = %v %q", d.Verdict, d.Reason)
	}
}

// Issue 11 item 16: an MCP server's dotted method names fall under Tool.* in every tool rule.
func TestDottedMethodNames(t *testing.T) {
	ms := []ToolMethod{{"Git.delete.repo", tool.External}, {"Git.status", tool.Read}, {"Files.read", tool.Read}}
	s := set(t, []RuleSpec{r("AllowTools", "Git.*")})
	got, err := s.Offered(ms)
	if err != nil || targets(got) != "Git.delete.repo Git.status" {
		t.Fatalf("Offered = %q, %v", targets(got), err)
	}
	s = set(t, []RuleSpec{r("DenyTools", "Git.*")})
	if got, _ := s.Offered(ms); targets(got) != "Files.read" {
		t.Fatalf("DenyTools(Git.*) left %q", targets(got))
	}
	if d := s.Decide("Git.delete.repo", tool.External, nil); d.Verdict != Refused {
		t.Fatalf("a denied dotted method was %v", d.Verdict)
	}
	s = set(t, []RuleSpec{r("DenyArgs", "Git.*", "name", "^prod"), r("ApproveTools", "Git.delete.*")})
	if d := s.Decide("Git.delete.repo", tool.External, json.RawMessage(`{"name": "prod-db"}`)); d.Verdict != Refused {
		t.Fatalf("DenyArgs(Git.*) on a dotted method: %v", d.Verdict)
	}
	if d := s.Decide("Git.delete.repo", tool.External, json.RawMessage(`{"name": "scratch"}`)); d.Verdict != NeedsApproval {
		t.Fatalf("ApproveTools(Git.delete.*): %v", d.Verdict)
	}
}
