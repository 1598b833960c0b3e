package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"halolang.dev/halo/host/tool"
)

// workspaceTool is a Workspace as halo validate knows it: every method with its parameters.
var workspaceTool = KnownTool{Name: "Code", Methods: []tool.Method{
	{Name: "read", Effect: tool.Read, Params: json.RawMessage(`{"properties":{"path":{},"offset":{}}}`)},
	{Name: "list", Effect: tool.Read, Params: json.RawMessage(`{"properties":{"path":{},"recursive":{}}}`)},
	{Name: "search", Effect: tool.Read, Params: json.RawMessage(`{"properties":{"pattern":{},"path":{}}}`)},
	{Name: "write", Effect: tool.Write, Params: json.RawMessage(`{"properties":{"path":{},"content":{}}}`)},
	{Name: "edit", Effect: tool.Write, Params: json.RawMessage(`{"properties":{"path":{},"old":{},"new":{}}}`)},
	{Name: "delete", Effect: tool.Write, Params: json.RawMessage(`{"properties":{"path":{},"recursive":{}}}`)},
}}

var bashTool = KnownTool{Name: "Tests", Methods: []tool.Method{
	{Name: "run", Effect: tool.External, Params: json.RawMessage(`{"properties":{"command":{}}}`)},
}}

const testFiles = `(^|/)(__tests__|__snapshots__)/|[._](test|spec)\.|(^|/)bunfig\.toml$`

// Issue 27 item 9: the seed's FixerTools denies Code.write to test files and leaves
// Code.edit of the same files open; halo validate sees it, and the policy docs/policies.md
// shows instead has no hole.
func TestFindings(t *testing.T) {
	tools := NewKnownTools([]KnownTool{workspaceTool, bashTool})
	tests := []struct {
		name     string
		policies [][]RuleSpec
		want     []string // a part of each finding's message, in order
	}{
		{"the seed's hole", [][]RuleSpec{{
			r("AllowTools", "Code.*", "Tests.run"), r("DenyTools", "Code.delete"),
			r("DenyArgs", "Code.write", "path", `\.test\.`),
			r("DenyArgs", "Tests.run", "command", `^(?!bun test[\w ./-]*$)`),
		}}, []string{`DenyArgs("Code.write", "path", "\\.test\\.") guards Code.write, but Code.edit also takes "path" and nothing guards it`}},
		{"both write methods checked, delete denied", [][]RuleSpec{{
			r("AllowTools", "Code.*", "Tests.run"), r("DenyTools", "Code.delete"),
			r("DenyArgs", "Code.write", "path", testFiles), r("DenyArgs", "Code.edit", "path", testFiles),
		}}, nil},
		{"every method checked", [][]RuleSpec{{r("DenyArgs", "Code.*", "path", testFiles)}}, nil},
		{"siblings put to a person", [][]RuleSpec{{r("DenyArgs", "Code.write", "path", testFiles), r("ApproveTools", "Code.edit", "Code.delete")}}, nil},
		{"a guard in another policy counts", [][]RuleSpec{{r("DenyArgs", "Code.write", "path", testFiles)}, {r("DenyTools", "Code.edit", "Code.delete")}}, nil},
		{"two siblings open", [][]RuleSpec{{r("DenyArgs", "Code.write", "path", testFiles)}}, []string{"but Code.edit, Code.delete also take \"path\" and nothing guards them"}},
		{"a read guard leaves stronger siblings open", [][]RuleSpec{{r("DenyArgs", "Code.read", "path", `\.env`), r("DenyTools", "Code.write", "Code.edit", "Code.delete")}}, []string{"but Code.list, Code.search also take"}},
		{"an argument no method takes", [][]RuleSpec{{r("DenyArgs", "Code.write", "pth", testFiles), r("DenyTools", "Code.edit", "Code.delete")}}, []string{`never refuses anything: Code.write takes no argument "pth" (it takes content, path)`}},
		{"approval of a denied method", [][]RuleSpec{{r("DenyTools", "Code.*"), r("ApproveTools", "Code.delete")}}, []string{`ApproveTools("Code.delete") never applies to "Code.delete": Code.delete is refused first by DenyTools("Code.*")`}},
		{"deny of a method effects already hide", [][]RuleSpec{{r("AllowEffects", Ident("read")), r("DenyTools", "Code.write")}}, []string{`DenyTools("Code.write") never applies`}},
		{"deny beside another deny of the same", [][]RuleSpec{{r("DenyTools", "Code.write"), r("DenyTools", "Code.write")}}, []string{`DenyTools("Code.write") never applies`, `DenyTools("Code.write") never applies`}},
		{"allow of a denied method", [][]RuleSpec{{r("AllowTools", "Code.write", "Code.read"), r("DenyTools", "Code.write")}}, []string{`AllowTools("Code.write", "Code.read") never applies to "Code.write"`}},
		{"approve effects refused", [][]RuleSpec{{r("AllowEffects", Ident("read")), r("ApproveEffects", Ident("write"))}}, []string{`ApproveEffects(write) never applies: AllowEffects(read) refuses`}},
		{"approve effects partly allowed", [][]RuleSpec{{r("AllowEffects", Ident("read"), Ident("write")), r("ApproveEffects", Ident("write"), Ident("external"))}}, nil},
		{"unknown tools are left out", [][]RuleSpec{{r("DenyArgs", "Git.write", "path", "x"), r("DenyTools", "*"), r("ApproveTools", "Gi*.x")}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := set(t, tt.policies...).Findings(tools)
			if len(got) != len(tt.want) {
				t.Fatalf("findings %+v, want %d", got, len(tt.want))
			}
			for i, f := range got {
				if !strings.Contains(f.Message, tt.want[i]) || f.Pos == "" || f.Policy == "" {
					t.Errorf("finding %+v, want %q", f, tt.want[i])
				}
			}
		})
	}
}
