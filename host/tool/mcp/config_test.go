package mcp

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "npx -y @modelcontextprotocol/server-github", want: []string{"npx", "-y", "@modelcontextprotocol/server-github"}},
		{in: "  docker   run\t-i  ", want: []string{"docker", "run", "-i"}},
		{in: `python 'my server.py' --name "a b"`, want: []string{"python", "my server.py", "--name", "a b"}},
		{in: `echo "it's" 'say "hi"'`, want: []string{"echo", "it's", `say "hi"`}},
		{in: `a "x\"y" b\ c`, want: []string{"a", `x"y`, "b c"}},
		{in: `a '' ""`, want: []string{"a", "", ""}},
		{in: `run $HOME *.txt | cat`, want: []string{"run", "$HOME", "*.txt", "|", "cat"}}, // no shell
		{in: `a 'open`, err: "unterminated ' quote"},
		{in: `a "open`, err: `unterminated " quote`},
		{in: "   ", err: "empty"},
	}
	for _, tt := range tests {
		got, err := SplitCommand(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("SplitCommand(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{"npx -y x", `a "b c" 'd'`, `a\ b "x\"y"`, `'`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args, err := SplitCommand(s)
		if err != nil {
			return
		}
		if len(args) == 0 {
			t.Fatalf("SplitCommand(%q) returned no arguments and no error", s)
		}
		// Quoting each argument and splitting again gives the same arguments back.
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = "'" + a + "'"
			if strings.ContainsRune(a, '\'') {
				quoted[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(a) + `"`
			}
		}
		again, err := SplitCommand(strings.Join(quoted, " "))
		if err != nil || !reflect.DeepEqual(again, args) {
			t.Fatalf("SplitCommand(%q) = %q; re-quoted %q splits to %q, %v", s, args, strings.Join(quoted, " "), again, err)
		}
	})
}

func TestCheckDeclaration(t *testing.T) {
	tests := []struct {
		name  string
		args  []any
		named map[string]any
		want  []string // "option: part of the message"
	}{
		{"stdio ok", []any{"npx -y server"}, map[string]any{"env": []any{"GITHUB_TOKEN"}, "cwd": "tools", "timeout_ms": 5000.0}, nil},
		{"http ok", nil, map[string]any{"url": "https://docs.example.com/mcp", "apiKey": "k", "headers": map[string]any{"X-Org": "acme"}}, nil},
		{"https first argument", []any{"https://docs.example.com/mcp"}, map[string]any{"apiKey": "k"}, nil},
		{"http on localhost", []any{"http://127.0.0.1:3001/mcp"}, nil, nil},
		{"unknown at validation", []any{nil}, map[string]any{"apiKey": nil}, nil},
		{"env record", []any{"srv"}, map[string]any{"env": map[string]any{"LOG_LEVEL": "warn"}}, nil},
		{"no server", nil, map[string]any{"timeout_ms": 10.0}, []string{"command: MCP needs a server"}},
		{"both", []any{"srv"}, map[string]any{"url": "https://x/mcp"}, []string{"url: give either"}},
		{"plain http elsewhere", nil, map[string]any{"url": "http://docs.example.com/mcp"}, []string{"url: http://docs.example.com/mcp: use https://"}},
		{"not a URL scheme", nil, map[string]any{"url": "ftp://x"}, []string{"url: ftp://x: want an https:// URL"}},
		{"apiKey on stdio", []any{"srv"}, map[string]any{"apiKey": "k", "headers": map[string]any{}}, []string{"apiKey: applies to HTTP servers only", "headers: applies to HTTP servers only"}},
		{"env on http", []any{"https://x/mcp"}, map[string]any{"env": []any{"A"}, "cwd": "."}, []string{"cwd: applies to stdio servers only", "env: applies to stdio servers only"}},
		{"bad env", []any{"srv"}, map[string]any{"env": []any{"NOT-A-NAME"}}, []string{`env: "NOT-A-NAME" is not a variable name`}},
		{"env not a list", []any{"srv"}, map[string]any{"env": "GITHUB_TOKEN"}, []string{"env: must be a list of variable names"}},
		{"bad headers", nil, map[string]any{"url": "https://x/mcp", "headers": map[string]any{"X": 1.0}}, []string{"headers: must be a record of strings"}},
		{"bad timeout", []any{"srv"}, map[string]any{"timeout_ms": -1.0}, []string{"timeout_ms: must be a positive whole number"}},
		{"timeout as text", []any{"srv"}, map[string]any{"timeout_ms": "60s"}, []string{"timeout_ms: must be a number"}},
		{"unknown option", []any{"srv"}, map[string]any{"token": "x"}, []string{"token: unknown option"}},
		{"size limit", []any{"srv"}, map[string]any{"max_result_bytes": 67108864.0}, nil},
		{"size limit over http", nil, map[string]any{"url": "https://x/mcp", "max_result_bytes": nil}, nil},
		{"bad size limit", []any{"srv"}, map[string]any{"max_result_bytes": "64M"}, []string{"max_result_bytes: must be a positive whole number of bytes"}},
		{"quote", []any{"srv 'x"}, nil, []string{"command: the command \"srv 'x\" has an unterminated ' quote"}},
		{"two positionals", []any{"a", "b"}, nil, []string{"command: MCP takes one positional argument"}},
		{"first not a string", []any{3.0}, nil, []string{"command: the first argument must be a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := CheckDeclaration(tool.Declaration{Name: "T", Provider: "MCP", Args: tt.args, Named: tt.named})
			if len(ps) != len(tt.want) {
				t.Fatalf("got %v, want %d problems: %v", ps, len(tt.want), tt.want)
			}
			for i, p := range ps {
				if !strings.HasPrefix(p.String(), tt.want[i]) {
					t.Errorf("problem %d: %q, want it to start with %q", i, p.String(), tt.want[i])
				}
				if p.ErrorCode() != tool.CodeToolConfig {
					t.Errorf("code %s", p.ErrorCode())
				}
			}
		})
	}
}

func TestFromDeclaration(t *testing.T) {
	env := map[string]string{"PATH": "/bin", "HOME": "/h", "TOKEN": "t", "SECRET": "s"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	d := tool.Declaration{Name: "Git", Provider: "MCP", Getenv: getenv, Dir: "/proj",
		Args:  []any{"npx -y server"},
		Named: map[string]any{"env": []any{"TOKEN", "MISSING"}, "cwd": "sub", "timeout_ms": 1500.0, "max_result_bytes": 1048576.0}}
	cfg, err := FromDeclaration(d)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Name: "Git", Command: []string{"npx", "-y", "server"}, Dir: "/proj/sub", Timeout: 1500 * time.Millisecond,
		Env: map[string]string{"PATH": "/bin", "HOME": "/h", "TOKEN": "t"}, MaxResultBytes: 1 << 20}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got %+v\nwant %+v", cfg, want)
	}

	d = tool.Declaration{Name: "Docs", Provider: "MCP", Getenv: getenv, Dir: "/proj",
		Named: map[string]any{"url": "https://docs.example.com/mcp", "apiKey": "k", "headers": map[string]any{"X-Org": "acme"}}}
	cfg, err = FromDeclaration(d)
	if err != nil {
		t.Fatal(err)
	}
	want = Config{Name: "Docs", URL: "https://docs.example.com/mcp", APIKey: "k", Headers: map[string]string{"X-Org": "acme"},
		Dir: "/proj", Timeout: DefaultTimeout, MaxResultBytes: tool.DefaultMaxResultBytes}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got %+v\nwant %+v", cfg, want)
	}

	_, err = FromDeclaration(tool.Declaration{Name: "Bad", Named: map[string]any{"env": 3.0}})
	if errcode.Code(err) != tool.CodeToolConfig || !strings.Contains(err.Error(), "MCP tool Bad:") {
		t.Errorf("got %v", err)
	}
}

func TestPackageConfig(t *testing.T) {
	env := map[string]string{"PATH": "/bin", "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp", "OTHER": "o"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	pkg := Package{Command: "docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server", Env: []string{"GITHUB_PERSONAL_ACCESS_TOKEN"}}
	cfg, err := PackageConfig(pkg, tool.Declaration{Name: "GH", Getenv: getenv, Named: map[string]any{"timeout_ms": 2000.0}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Command[0] != "docker" || len(cfg.Command) != 7 || cfg.Timeout != 2*time.Second ||
		!reflect.DeepEqual(cfg.Env, map[string]string{"PATH": "/bin", "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp"}) {
		t.Errorf("got %+v", cfg)
	}
	// The declaration cannot repoint the package's server or widen its environment.
	for _, d := range []tool.Declaration{
		{Name: "GH", Args: []any{"evil-server"}},
		{Name: "GH", Named: map[string]any{"env": []any{"OTHER"}}},
		{Name: "GH", Named: map[string]any{"url": "https://evil.example/mcp"}},
	} {
		if _, err := PackageConfig(pkg, d); errcode.Code(err) != tool.CodeToolConfig || !strings.Contains(err.Error(), "fixed by its package") {
			t.Errorf("%+v: got %v", d, err)
		}
	}
	// A URL package takes apiKey: and headers: from the declaration.
	cfg, err = PackageConfig(Package{URL: "https://mcp.example.com/mcp"}, tool.Declaration{Name: "D", Named: map[string]any{"apiKey": "k"}})
	if err != nil || cfg.URL != "https://mcp.example.com/mcp" || cfg.APIKey != "k" {
		t.Errorf("got %+v, %v", cfg, err)
	}
	if _, err := PackageConfig(Package{}, tool.Declaration{Name: "D"}); err == nil {
		t.Errorf("a package without command or url was accepted")
	}
}
