package pkgmgr

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const acmeManifest = `{
  "name": "acme",
  "version": "1.0.0",
  "description": "The Acme orders API",
  "publisher": "Acme Inc.",
  "homepage": "https://docs.acme.example",
  "license": "MIT",
  "files": ["README.md"],
  "providers": {
    "Acme": {
      "kind": "http",
      "description": "Acme orders",
      "baseUrl": "https://api.acme.example/v2",
      "auth": { "type": "bearer", "env": "ACME_API_KEY" },
      "methods": [
        { "name": "get_order", "description": "Get an order by id.", "effect": "read",
          "http": { "method": "GET", "path": "/orders/{id}" } },
        { "name": "cancel_order", "description": "Cancel an order.", "effect": "external",
          "http": { "method": "POST", "path": "/orders/{id}/cancel" },
          "params": { "type": "object", "properties": { "id": { "type": "string" }, "reason": { "type": "string" } }, "required": ["id"] } }
      ]
    }
  }
}`

func TestParseManifestValid(t *testing.T) {
	m, err := ParseManifest([]byte(acmeManifest))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "acme" || m.Providers["Acme"].Auth.Env[0] != "ACME_API_KEY" || len(m.Providers["Acme"].Methods) != 2 {
		t.Fatalf("parsed %+v", m)
	}
	got := m.Permissions()
	want := Permissions{Network: []string{"api.acme.example"}, Env: []string{"ACME_API_KEY"}, Spawn: []string{}, Code: false}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("permissions %+v, want %+v", got, want)
	}
}

func TestPermissionsByKind(t *testing.T) {
	m, err := ParseManifest([]byte(`{"name":"mix","version":"0.1.0","description":"d","providers":{
	  "Jira":{"kind":"http","description":"d","baseUrl":"https://{{site}}.atlassian.net/rest/api/3",
	    "auth":{"type":"basic","env":["JIRA_EMAIL","JIRA_API_TOKEN"]},
	    "methods":[{"name":"me","description":"d","effect":"read","http":{"method":"GET","path":"/myself"}}]},
	  "Gh":{"kind":"mcp","description":"d","command":"docker run -i --rm ghcr.io/x","env":["GH_TOKEN"]},
	  "Docs":{"kind":"mcp","description":"d","url":"https://docs.example.com/mcp"},
	  "Clock":{"kind":"module","description":"d","executables":{"linux/amd64":"bin/clock"},"env":["TZ"],"network":["api.clock.example"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := m.Permissions()
	want := Permissions{
		Network: []string{"*.atlassian.net", "api.clock.example", "docs.example.com"},
		Env:     []string{"GH_TOKEN", "JIRA_API_TOKEN", "JIRA_EMAIL", "TZ"},
		Spawn:   []string{"docker"},
		Code:    true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("permissions %+v, want %+v", got, want)
	}
	if !got.NeedsTrust() {
		t.Fatal("a module needs trust")
	}
}

// Each broken manifest must report every problem, each at its JSON path.
func TestParseManifestProblems(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     []string // "path: substring"
	}{
		{"not json", `{`, nil},
		{"empty object", `{}`, []string{"name: required", "version: required", "description: required", "providers: required"}},
		{"bad top fields", `{"name":"Acme_1","version":"1.0","description":"","homepage":"ftp://x","extra":1,"providers":{}}`, []string{
			`name: "Acme_1"`, `version: "1.0"`, "description: must not be empty", "homepage:", "extra: unknown field", "providers: at least one"}},
		{"long name", `{"name":"` + strings.Repeat("a", 64) + `","version":"1.0.0","description":"d","providers":{"A":{"kind":"mcp","description":"d","url":"https://x.example"}}}`, []string{"name:"}},
		{"provider names and kinds", `{"name":"a","version":"1.0.0-beta.1","description":"d","providers":{"lower":{"kind":"mcp","description":"d","url":"https://x.example"},"B":{"kind":"plugin","description":"d"},"C":{"description":"d"}}}`, []string{
			`providers.lower: provider name "lower"`, `providers.B.kind: "plugin"`, "providers.C.kind: required"}},
		{"http rules", `{"name":"a","version":"1.0.0","description":"d","providers":{"A":{"kind":"http","description":"d",
			"baseUrl":"http://api.example.com/{{bad-name}}","auth":{"type":"header","env":["X","Y"]},"body":"xml","headers":{"Bad Header":"x","V":"a\nb"},
			"methods":[
			 {"name":"GetThing","description":"","effect":"write","http":{"method":"GET","path":"orders/{id}?x=1"}},
			 {"name":"go","description":"d","effect":"maybe","http":{"method":"TRACE","path":"/a/../b"}},
			 {"name":"go","description":"d","effect":"read","http":{"method":"POST","path":"/a/x{id}"}},
			 {"name":"p","description":"d","effect":"write","http":{"method":"POST","path":"/o/{id}"},"params":{"type":"string","properties":{}}}
			]}}}`, []string{
			"providers.A.baseUrl: {{bad-name}}", "providers.A.baseUrl: \"http://api.example.com/x\": plain http:// is allowed only on localhost",
			"providers.A.auth.env: header auth takes one variable", "providers.A.auth.name: required for header auth",
			`providers.A.body: "xml"`, `providers.A.headers["Bad Header"]`, "providers.A.headers.V: a header value cannot hold a line break",
			`providers.A.methods[0].name: "GetThing"`, "providers.A.methods[0].description: must not be empty",
			"providers.A.methods[0].effect: a GET method must be read", "providers.A.methods[0].http.path: \"orders/{id}?x=1\" must start with /",
			"providers.A.methods[0].http.path: \"orders/{id}?x=1\": no ? or #",
			`providers.A.methods[1].effect: "maybe"`, `providers.A.methods[1].http.method: "TRACE"`, "providers.A.methods[1].http.path: \"/a/../b\": no ..",
			`providers.A.methods[2].name: "go" is defined twice`, "providers.A.methods[2].http.path: \"/a/x{id}\": a {name} parameter must be a whole path segment",
			`providers.A.methods[3].params.type: the arguments are an object`, "providers.A.methods[3].params.properties: the path parameter {id} is not described",
		}},
		{"http needs methods and base", `{"name":"a","version":"1.0.0","description":"d","providers":{"A":{"kind":"http","description":"d","auth":{"type":"basic","env":"ONE"},"methods":[]}}}`, []string{
			"providers.A.baseUrl: required", "providers.A.auth.env: basic auth takes two variables", "providers.A.methods: at least one method"}},
		{"localhost http ok, wrong-kind field", `{"name":"a","version":"1.0.0","description":"d","providers":{"A":{"kind":"http","description":"d","baseUrl":"http://127.0.0.1:8080","command":"x",
			"methods":[{"name":"a","description":"d","http":{"method":"GET","path":"/"}}]}}}`, []string{
			"providers.A.command: unknown field", "providers.A.methods[0].effect: a GET method must be read"}},
		{"mcp rules", `{"name":"a","version":"1.0.0","description":"d","providers":{
			"Both":{"kind":"mcp","description":"d","command":"x","url":"https://x.example"},
			"None":{"kind":"mcp","description":"d"},
			"Env":{"kind":"mcp","description":"d","url":"https://x.example","env":["A"]},
			"BadEnv":{"kind":"mcp","description":"d","command":"x","env":"A"},
			"Plain":{"kind":"mcp","description":"d","url":"http://example.com/mcp"}}}`, []string{
			"providers.Both: give exactly one of command and url, not both", "providers.None: give exactly one",
			"providers.Env.env: only a stdio server", "providers.BadEnv.env: want a list", "providers.Plain.url:"}},
		{"module rules", `{"name":"a","version":"1.0.0","description":"d","providers":{
			"M":{"kind":"module","description":"d","executables":{"plan9/amd64":"bin/x","linux/amd64":"../x"},"build":{}},
			"N":{"kind":"module","description":"d","entry":"index.ts"},
			"O":{"kind":"module","description":"d","executables":{"linux/amd64":"bin/x"},"network":["ok.example.com", "https://x.example", 3]},
			"P":{"kind":"module","description":"d","executables":{"linux/amd64":"bin/x"},"network":"x.example"},
			"Q":{"kind":"http","description":"d","baseUrl":"https://x.example","network":["x.example"],
			  "methods":[{"name":"me","description":"d","effect":"read","http":{"method":"GET","path":"/me"}}]}}}`, []string{
			`providers.M.executables["plan9/amd64"]: unknown platform`, `providers.M.executables["linux/amd64"]: "../x"`,
			"providers.M.build.go: required", "providers.N.entry: unknown field", "providers.N.executables: required",
			`providers.O.network[1]: "https://x.example" is not a host name`, "providers.O.network[2]: want a host name",
			"providers.P.network: want a list of host names", "providers.Q.network:"}},
		{"files rules", `{"name":"a","version":"1.0.0","description":"d","files":["README.md","../etc","/abs",".env","docs/","docs","halo-tool.json","x.halotool",3],
			"providers":{"A":{"kind":"mcp","description":"d","url":"https://x.example"}}}`, []string{
			`files[1]: "../etc": .. is not allowed`, `files[2]: "/abs": an absolute path`, `files[3]: ".env": dot-files are not packed`,
			`files[5]: "docs" is listed twice`, `files[6]: "halo-tool.json" is never packed`, `files[7]: "x.halotool" is never packed`,
			"files[8]: want a path, got a number"}},
		{"files is a list", `{"name":"a","version":"1.0.0","description":"d","files":"README.md",
			"providers":{"A":{"kind":"mcp","description":"d","url":"https://x.example"}}}`, []string{"files: want a list of paths, got a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tt.manifest))
			var pe *Error
			if !errors.As(err, &pe) || pe.Code != CodeInvalid {
				t.Fatalf("want a %s error, got %v", CodeInvalid, err)
			}
			for _, w := range tt.want {
				found := false
				for _, p := range pe.Problems {
					if strings.Contains(p.String(), w) {
						found = true
					}
				}
				if !found {
					t.Errorf("no problem %q among:\n%s", w, pe.Error())
				}
			}
			if len(pe.Problems) < len(tt.want) {
				t.Errorf("got %d problems, want at least %d", len(pe.Problems), len(tt.want))
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	order := []string{"0.9.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.2.0", "1.10.0", "2.0.0"}
	for i := range order {
		for j := range order {
			want := compareInt(i, j)
			if got := CompareVersions(order[i], order[j]); got != want {
				t.Errorf("CompareVersions(%s, %s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
}

func TestSplitCommand(t *testing.T) {
	got := SplitCommand(`docker run -i --rm -e "A B" 'c d'  img`)
	want := []string{"docker", "run", "-i", "--rm", "-e", "A B", "c d", "img"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
		code string
	}{
		{"stripe", Spec{Name: "stripe"}, ""},
		{"jira@1.0.0", Spec{Name: "jira", Version: "1.0.0"}, ""},
		{"./my-tool", Spec{Path: "./my-tool"}, ""},
		{"my-tool-1.0.0.halotool", Spec{Path: "my-tool-1.0.0.halotool"}, ""},
		{"/abs/x", Spec{Path: "/abs/x"}, ""},
		{"https://example.com/x-1.0.0.halotool", Spec{URL: "https://example.com/x-1.0.0.halotool"}, ""},
		{"http://localhost:8080/x.halotool", Spec{URL: "http://localhost:8080/x.halotool"}, ""},
		{"http://[::1]:8080/x.halotool", Spec{URL: "http://[::1]:8080/x.halotool"}, ""},
		{"http://example.com/x.halotool", Spec{}, CodeRegistry},
		{"ftp://example.com/x.halotool", Spec{}, CodeRegistry},
		{"jira@latest", Spec{}, CodeNotFound},
		{"Jira", Spec{}, CodeNotFound},
	}
	for _, tt := range tests {
		got, err := ParseSpec(tt.in)
		if Code(err) != tt.code || (tt.code == "" && got != tt.want) {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v, %s", tt.in, got, err, tt.want, tt.code)
		}
	}
}
