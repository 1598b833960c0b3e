// Command gen writes the look-alike table of package fold (table.go) from Unicode's own data:
// TR39 confusables as carried by github.com/mtibben/confusables (version 13.0), compatibility
// decomposition (NFKD) from golang.org/x/text, and general categories from package unicode.
//
// The confusables map is unexported in that module, so the generator reads its tables.go
// source from the module cache and cross-checks every entry it parsed against the module's
// own Skeleton function. Skeleton itself is never used for folding: it rewrites ASCII
// (1→l, 0→O, m→rn) and maps capital-I look-alikes to a lower-case l, which would break digit
// and key detection. Instead each target is turned back into the ASCII character the
// source rune most resembles, keeping its case and digit-ness.
//
// Run it with `go generate ./host/policy/fold`.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

const confusablesModule = "github.com/mtibben/confusables"

func main() {
	out := flag.String("o", "table.go", "output file")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("gen: ")

	conf, err := loadConfusables()
	if err != nil {
		log.Fatal(err)
	}
	g := &generator{conf: conf, digit: digitValues()}
	src, n := g.table()
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %s: %d runes (TR39 entries read: %d)", *out, n, len(conf))
}

// loadConfusables parses the confusablesMap literal of the module's tables.go.
func loadConfusables() (map[rune]string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", confusablesModule)
	cmd.Stderr = os.Stderr
	dir, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("locate %s: %w", confusablesModule, err)
	}
	path := filepath.Join(strings.TrimSpace(string(dir)), "tables.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	m := map[rune]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "confusablesMap" || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.CompositeLit)
		if !ok {
			return false
		}
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			k, kok := kv.Key.(*ast.BasicLit)
			v, vok := kv.Value.(*ast.BasicLit)
			if !kok || !vok {
				continue
			}
			r, err1 := strconv.ParseInt(k.Value, 0, 32)
			s, err2 := strconv.Unquote(v.Value)
			if err1 != nil || err2 != nil {
				continue
			}
			m[rune(r)] = s
		}
		return false
	})
	if len(m) < 5000 {
		return nil, fmt.Errorf("%s: found only %d confusables; has the module's layout changed?", path, len(m))
	}
	// Cross-check the parse against the module's own function for every rune that NFD
	// leaves alone (Skeleton is NFD(map(NFD(s)))).
	bad := 0
	for r, t := range m {
		s := string(r)
		if norm.NFD.String(s) != s {
			continue
		}
		if confusables.Skeleton(s) != norm.NFD.String(t) {
			bad++
		}
	}
	if bad > 0 {
		return nil, fmt.Errorf("%d parsed confusables disagree with confusables.Skeleton", bad)
	}
	return m, nil
}

// digitValues maps every decimal digit (Nd) to its value. Unicode encodes each script's
// digits as a contiguous run 0…9, so the value is the distance from the run's start, mod 10.
func digitValues() map[rune]byte {
	d := map[rune]byte{}
	for _, rg := range unicode.Nd.R16 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			d[r] = 0
		}
	}
	for _, rg := range unicode.Nd.R32 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			d[r] = 0
		}
	}
	for r := range d {
		start := r
		for {
			if _, ok := d[start-1]; !ok {
				break
			}
			start--
		}
		d[r] = byte('0' + (r-start)%10)
	}
	return d
}

type generator struct {
	conf  map[rune]string
	digit map[rune]byte
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// skeleton returns TR39's prototype for an ASCII byte.
func (g *generator) skeleton(c byte) string {
	if t, ok := g.conf[rune(c)]; ok {
		return t
	}
	return string(rune(c))
}

// letterLike turns a TR39 target into the ASCII letter or digit that source r resembles:
// the targets are prototypes ("l" stands for l, I, 1 and |; "O" for O and 0; "rn" for m),
// so the ASCII characters sharing that prototype are the candidates, and r's case picks one.
func (g *generator) letterLike(r rune, target string) (string, bool) {
	if !isASCII(target) {
		return "", false
	}
	var cands []byte
	for c := byte('0'); c <= 'z'; c++ {
		if isAlnum(c) && g.skeleton(c) == target {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		for i := 0; i < len(target); i++ {
			if !isAlnum(target[i]) {
				return "", false
			}
		}
		return target, true
	}
	pick := func(ok func(byte) bool) (string, bool) {
		for _, c := range cands {
			if ok(c) {
				return string(rune(c)), true
			}
		}
		return "", false
	}
	isUpper := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	isLower := func(c byte) bool { return c >= 'a' && c <= 'z' }
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	switch {
	case unicode.IsUpper(r):
		if s, ok := pick(isUpper); ok {
			return s, true
		}
	case unicode.IsLower(r):
		if s, ok := pick(isLower); ok {
			return s, true
		}
	case unicode.IsNumber(r):
		if s, ok := pick(isDigit); ok {
			return s, true
		}
	}
	if s, ok := pick(func(c byte) bool { return isUpper(c) || isLower(c) }); ok {
		return s, true
	}
	return pick(isDigit)
}

func invisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// fold returns what r folds to, and whether it folds at all.
func (g *generator) fold(r rune) (string, bool) {
	switch {
	case r < 0x80:
		return string(r), true
	case r == 0x2028 || r == 0x2029 || r == 0x85:
		return "\n", true
	case invisible(r):
		return "", true
	case unicode.Is(unicode.Zs, r):
		return " ", true
	case unicode.Is(unicode.Pd, r) || r == 0x2212 || r == 0x2043 || r == 0xFE63 || r == 0xFF0D:
		return "-", true
	}
	if d, ok := g.digit[r]; ok {
		return string(rune(d)), true
	}
	if d := norm.NFKD.String(string(r)); d != string(r) {
		var b strings.Builder
		for _, c := range d {
			f, ok := g.fold(c)
			if !ok {
				return "", false
			}
			b.WriteString(f)
		}
		return b.String(), true
	}
	t, ok := g.conf[r]
	if !ok {
		return "", false
	}
	if unicode.IsLetter(r) || unicode.IsNumber(r) {
		return g.letterLike(r, t)
	}
	// Punctuation and symbols fold only to ASCII punctuation (’ to ', ∕ to /), never to a
	// letter: a divides sign is not an l.
	if len(t) == 1 && t[0] < 0x80 && !isAlnum(t[0]) && (unicode.IsPunct(r) || unicode.IsSymbol(r)) {
		return t, true
	}
	return "", false
}

func (g *generator) table() ([]byte, int) {
	type entry struct {
		r rune
		s string
	}
	var es []entry
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf) {
			continue
		}
		s, ok := g.fold(r)
		if !ok || !isASCII(s) || s == string(r) {
			continue
		}
		es = append(es, entry{r, s})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].r < es[j].r })

	var b bytes.Buffer
	b.WriteString("// Code generated by host/policy/fold/internal/gen from TR39 confusables 13.0 (github.com/mtibben/confusables),\n")
	b.WriteString("// NFKD (golang.org/x/text) and Unicode general categories (package unicode); DO NOT EDIT.\n\n")
	b.WriteString("package fold\n\n")
	fmt.Fprintf(&b, "// tableRunes lists, sorted, the %d non-ASCII runes that fold to ASCII (or to nothing).\n", len(es))
	b.WriteString("var tableRunes = [...]rune{")
	for i, e := range es {
		if i%12 == 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "0x%04X, ", e.r)
	}
	b.WriteString("\n}\n\n")
	b.WriteString("// tableEnds[i] is the end in tableData of what tableRunes[i] folds to; it starts at tableEnds[i-1].\n")
	b.WriteString("var tableEnds = [...]uint16{")
	var data strings.Builder
	for i, e := range es {
		if i%16 == 0 {
			b.WriteString("\n")
		}
		data.WriteString(e.s)
		fmt.Fprintf(&b, "%d, ", data.Len())
	}
	b.WriteString("\n}\n\n")
	if data.Len() > 0xFFFF {
		log.Fatalf("table data too long for uint16 offsets: %d", data.Len())
	}
	b.WriteString("// tableData holds the folded forms, back to back.\n")
	b.WriteString("const tableData = \"\" +\n")
	d := data.String()
	for len(d) > 0 {
		n := min(len(d), 64)
		fmt.Fprintf(&b, "\t%s", strconv.Quote(d[:n]))
		d = d[n:]
		if len(d) > 0 {
			b.WriteString(" +")
		}
		b.WriteString("\n")
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatalf("format: %v", err)
	}
	return src, len(es)
}
