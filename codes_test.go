package halo_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"halolang.dev/halo/docs"
)

// codePattern is what a stable error code looks like: UPPER_SNAKE.
var codePattern = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)

// codeConstants reads every error code the host defines: the string constants named Code*
// in the module's non-test Go files (a constant set to another constant, such as
// `CodeTimeout = errcode.CodeTimeout`, names a code and defines none). The SDK and the plugins
// built on it are left out: they are a module of their own, whose codes travel over the wire
// and which host/tool/plugin maps onto its own. It returns each code with the constants that
// define it.
func codeConstants(t *testing.T) map[string][]string {
	t.Helper()
	codes := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "third_party") || path == "sdk" || path == "plugins" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Code") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil || !codePattern.MatchString(v) {
						continue
					}
					codes[v] = append(codes[v], filepath.Dir(path)+"."+name.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(codes) < 20 {
		t.Fatalf("found only %d codes: the scan is broken", len(codes))
	}
	return codes
}

// A docTable is one markdown table of docs/: its file, its header's cells and its rows'.
type docTable struct {
	file   string
	header []string
	rows   [][]string
}

func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	// A `\|` inside a cell is text, not a border.
	parts := strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(strings.ReplaceAll(p, "\x00", `\|`))
	}
	return parts
}

func docTables(t *testing.T) []docTable {
	t.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	var out []docTable
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i+1 < len(lines); i++ {
			if !strings.HasPrefix(lines[i], "|") || !strings.HasPrefix(lines[i+1], "| ---") && !strings.HasPrefix(lines[i+1], "|---") {
				continue
			}
			tbl := docTable{file: filepath.Base(file), header: cells(lines[i])}
			j := i + 2
			for ; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
				tbl.rows = append(tbl.rows, cells(lines[j]))
			}
			out = append(out, tbl)
			i = j
		}
	}
	return out
}

// linkTarget finds a markdown link's file (empty for a link within the page) and anchor.
var linkTarget = regexp.MustCompile(`\]\(([a-z-]*\.md)?#([a-z0-9_-]+)\)`)

// docAnchors returns the anchors of each docs page's headings, as GitHub makes them: lower
// case, punctuation other than '-' and '_' dropped, spaces as '-'.
func docAnchors(t *testing.T) map[string]map[string]bool {
	t.Helper()
	files, _ := filepath.Glob("docs/*.md")
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	out := map[string]map[string]bool{}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		for _, line := range strings.Split(string(b), "\n") {
			if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
				set[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")] = true
			}
		}
		out[filepath.Base(file)] = set
	}
	return out
}

// rowCode returns the code a table row starts with (`CODE`), or "".
func rowCode(row []string) string {
	if len(row) == 0 {
		return ""
	}
	c := strings.TrimSuffix(strings.TrimPrefix(row[0], "`"), "`")
	if !codePattern.MatchString(c) || c == row[0] {
		return ""
	}
	return c
}

// Every error code the host defines is explained in docs/ exactly once, in a table whose
// first column is "code", and docs/errors.md lists it once, linking to that page. A code
// defined in code but not in docs, documented twice (two explanations drift apart), or
// documented with no constant behind it fails.
func TestErrorCodesDocumented(t *testing.T) {
	codes := codeConstants(t)
	for code, consts := range codes {
		if len(consts) > 1 {
			sort.Strings(consts)
			t.Errorf("code %s is defined by %d constants (%s): one package owns it, the others name its constant", code, len(consts), strings.Join(consts, ", "))
		}
	}
	anchors := docAnchors(t)
	defs := map[string][]string{}  // code -> files that explain it
	index := map[string][]string{} // code -> the index rows' "explained in" cells
	sawIndex := false
	for _, tbl := range docTables(t) {
		if len(tbl.header) == 0 || !strings.EqualFold(tbl.header[0], "code") {
			continue
		}
		isIndex := tbl.file == "errors.md" && len(tbl.header) > 1 && strings.EqualFold(tbl.header[1], "explained in")
		sawIndex = sawIndex || isIndex
		for _, row := range tbl.rows {
			code := rowCode(row)
			if code == "" {
				t.Errorf("docs/%s: a row of a code table does not start with a `CODE`: %q", tbl.file, strings.Join(row, " | "))
				continue
			}
			if isIndex {
				index[code] = append(index[code], strings.Join(row[1:], " "))
			} else {
				defs[code] = append(defs[code], tbl.file)
			}
		}
	}
	if !sawIndex {
		t.Fatal("docs/errors.md has no index table (| code | explained in |)")
	}
	var all []string
	for code := range codes {
		all = append(all, code)
	}
	sort.Strings(all)
	for _, code := range all {
		switch files := defs[code]; len(files) {
		case 0:
			t.Errorf("code %s (%s) is not explained in docs/: add a row to the code table of the page it belongs to", code, codes[code][0])
		case 1:
			switch rows := index[code]; {
			case len(rows) == 0:
				t.Errorf("code %s is missing from the index in docs/errors.md", code)
			case len(rows) > 1:
				t.Errorf("code %s is listed %d times in docs/errors.md", code, len(rows))
			default:
				link := linkTarget.FindStringSubmatch(rows[0])
				file := ""
				if link != nil {
					file = link[1]
					if file == "" {
						file = "errors.md"
					}
				}
				switch {
				case file != files[0]:
					t.Errorf("docs/errors.md links code %s to %q, but docs/%s explains it", code, rows[0], files[0])
				case !anchors[file][link[2]]:
					t.Errorf("docs/errors.md links code %s to %s#%s: docs/%s has no such heading", code, file, link[2], file)
				}
			}
		default:
			t.Errorf("code %s is explained %d times in docs/ (%s): explain it once and link to it", code, len(files), strings.Join(files, ", "))
		}
	}
	for code, files := range defs {
		if _, ok := codes[code]; !ok {
			t.Errorf("docs/%s explains code %s, which no constant defines", files[0], code)
		}
	}
	for code := range index {
		if _, ok := codes[code]; !ok {
			t.Errorf("docs/errors.md lists code %s, which no constant defines", code)
		}
	}
}

// Every error code has an entry in docs/errors.md (the one halo explain prints, embedded by
// package docs) that says what it means, shows an example in a code block, and says how to
// fix it; and no entry is left for a code that is gone.
func TestEveryCodeHasAnExplanation(t *testing.T) {
	codes := codeConstants(t)
	entries := map[string]docs.Entry{}
	for _, e := range docs.Entries() {
		if _, dup := entries[e.Code]; dup {
			t.Errorf("docs/errors.md has two entries for %s", e.Code)
		}
		entries[e.Code] = e
		if _, ok := codes[e.Code]; !ok {
			t.Errorf("docs/errors.md has an entry for %s, which no constant defines", e.Code)
		}
	}
	var all []string
	for code := range codes {
		all = append(all, code)
	}
	sort.Strings(all)
	for _, code := range all {
		e, ok := entries[code]
		if !ok {
			t.Errorf("code %s has no entry in docs/errors.md: add a ### `%s` section with what it means, Example: (a code block) and Fix:", code, code)
			continue
		}
		ex := strings.Index(e.Text, "Example:")
		fence := strings.Index(e.Text, "```")
		fix := strings.Index(e.Text, "\nFix: ")
		if ex <= 0 || fence < ex || fix < fence || len(strings.TrimSpace(e.Text[fix+6:])) < 10 {
			t.Errorf("the entry of %s in docs/errors.md needs a meaning, then Example: with a code block, then Fix: with how to fix it:\n%s", code, e.Text)
		}
	}
}
