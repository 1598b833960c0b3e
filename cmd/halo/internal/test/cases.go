package test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Suffix is how a test case file's name ends. A case file tests the .halo file of the same
// name beside it (greet.test.json tests greet.halo) unless it says otherwise ("file").
const Suffix = ".test.json"

// CodeTestCase is the code of a test case file that cannot be used: not JSON, an unknown key,
// a value of the wrong kind, a pipeline or file that does not exist.
const CodeTestCase = "TEST_CASE"

// maxCaseFile bounds what is read of one case file.
const maxCaseFile = 8 << 20

// A Problem is one thing wrong with a case file.
type Problem struct {
	File    string `json:"file"`
	Message string `json:"message"`
	Code    string `json:"code"`
	// index is the case's place in its file, for sorting.
	index int
}

func (p Problem) String() string { return fmt.Sprintf("%s: %s [%s]", p.File, p.Message, p.Code) }

// A Case is one test case.
type Case struct {
	// CaseFile is the case file's path as shown (relative to the working folder when given
	// so); Index its place in the file, from 1 (0 for a file that holds one case).
	CaseFile string
	Index    int
	Name     string
	// File is the .halo file, as shown; abs is where it is.
	File     string
	abs      string
	Pipeline string
	Inputs   map[string]any
	Mocks    json.RawMessage
	// mocksDir is the folder of the mocks file the case names, whose .halo files its keys
	// may name too (as halo run --mocks); "" for mocks written in the case.
	mocksDir string
	Expect   Expect
}

// ID is how the case is named in the output and matched by --run: "file: name".
func (c *Case) ID() string {
	name := c.Name
	if name == "" && c.Index > 0 {
		name = "case " + strconv.Itoa(c.Index)
	}
	if name == "" {
		return c.CaseFile
	}
	return c.CaseFile + ": " + name
}

// Expect is what a case expects of its run.
type Expect struct {
	// Status is completed (the default), failed or paused.
	Status string
	// Output, when HasOutput, is the exact output.
	Output    any
	HasOutput bool
	// Schema, when not nil, is a JSON Schema the output must satisfy.
	Schema *jsonschema.Schema
	// Calls, when HasCalls, are the targets of the run's model and tool calls, in order.
	Calls    []string
	HasCalls bool
	// Violations, when HasViolations, are the run's policy violations in order: each
	// given field must be equal (message: contained in the violation's message).
	Violations    []map[string]string
	HasViolations bool
	// Error, when not "", is the failed run's error code.
	Error string
}

var (
	caseKeys      = []string{"name", "file", "pipeline", "inputs", "mocks", "expect"}
	expectKeys    = []string{"status", "output", "outputSchema", "calls", "violations", "error"}
	violationKeys = []string{"policy", "rule", "phase", "agent", "target", "message"}
)

// findCases lists the case files the arguments name: a file as it is, a folder's *.test.json
// files and those of its subfolders (but folders whose names start with "." and
// node_modules).
func findCases(dir string, args []string) ([]string, []Problem) {
	if len(args) == 0 {
		args = []string{"."}
	}
	var out []string
	var probs []Problem
	seen := map[string]bool{}
	add := func(p string) {
		if full := filepath.Clean(abs(dir, p)); !seen[full] {
			seen[full] = true
			out = append(out, p)
		}
	}
	for _, arg := range args {
		st, err := os.Stat(abs(dir, arg))
		if err != nil {
			probs = append(probs, Problem{File: arg, Message: "cannot read it: " + unwrap(err).Error(), Code: CodeTestCase})
			continue
		}
		if !st.IsDir() {
			add(arg)
			continue
		}
		var found []string
		err = filepath.WalkDir(abs(dir, arg), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if path != abs(dir, arg) && (strings.HasPrefix(name, ".") || name == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(name, Suffix) && d.Type().IsRegular() {
				rel, err := filepath.Rel(abs(dir, arg), path)
				if err != nil {
					return err
				}
				found = append(found, filepath.Join(arg, rel))
			}
			return nil
		})
		if err != nil {
			probs = append(probs, Problem{File: arg, Message: "cannot read the folder: " + unwrap(err).Error(), Code: CodeTestCase})
		}
		sort.Strings(found)
		for _, f := range found {
			add(f)
		}
	}
	return out, probs
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func abs(dir, p string) string {
	if dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// readCaseFile reads a case file: one case object, or a list of them.
func readCaseFile(dir, path string) ([]*Case, []Problem) {
	prob := func(format string, args ...any) []Problem {
		return []Problem{{File: path, Message: fmt.Sprintf(format, args...), Code: CodeTestCase}}
	}
	data, err := readLimited(abs(dir, path))
	if err != nil {
		return nil, prob("%v", err)
	}
	return parseCaseFile(dir, path, data)
}

// parseCaseFile reads the text of the case file at path.
func parseCaseFile(dir, path string, data []byte) ([]*Case, []Problem) {
	prob := func(format string, args ...any) []Problem {
		return []Problem{{File: path, Message: fmt.Sprintf(format, args...), Code: CodeTestCase}}
	}
	trimmed := bytes.TrimSpace(data)
	var raws []json.RawMessage
	list := len(trimmed) > 0 && trimmed[0] == '['
	if list {
		if err := strictUnmarshal(trimmed, &raws); err != nil {
			return nil, prob("not a JSON list of test cases: %s", jsonError(err))
		}
		if len(raws) == 0 {
			return nil, prob("an empty list: no test case")
		}
	} else {
		raws = []json.RawMessage{trimmed}
	}
	var cases []*Case
	var probs []Problem
	for i, raw := range raws {
		c := &Case{CaseFile: path}
		where := ""
		if list {
			c.Index = i + 1
			where = fmt.Sprintf("case %d: ", i+1)
		}
		for _, msg := range parseCase(c, dir, raw) {
			probs = append(probs, Problem{File: path, Message: where + msg, Code: CodeTestCase, index: c.Index})
		}
		cases = append(cases, c)
	}
	return cases, probs
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %w", unwrap(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCaseFile+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %w", unwrap(err))
	}
	if len(data) > maxCaseFile {
		return nil, fmt.Errorf("larger than %d MB", maxCaseFile>>20)
	}
	return data, nil
}

// parseCase reads one case object into c and returns what is wrong with it.
func parseCase(c *Case, dir string, raw json.RawMessage) []string {
	obj, err := decodeObject(raw)
	if err != nil {
		return []string{"want a test case object {pipeline, inputs, mocks, expect}: " + jsonError(err)}
	}
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	for _, f := range obj {
		if !contains(caseKeys, f.Key) {
			bad("unknown key %q (a test case has %s)", f.Key, strings.Join(caseKeys, ", "))
		}
	}
	str := func(key string) string {
		v, ok := obj.get(key)
		if !ok {
			return ""
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil || s == "" {
			bad("%s: want a non-empty string", key)
		}
		return s
	}
	c.Name = str("name")
	c.Pipeline = str("pipeline")
	c.File = str("file")
	base := filepath.Dir(c.CaseFile)
	switch {
	case c.File != "":
		if !filepath.IsAbs(c.File) {
			c.File = filepath.Join(base, c.File)
		}
	case strings.HasSuffix(c.CaseFile, Suffix):
		c.File = strings.TrimSuffix(c.CaseFile, Suffix) + ".halo"
	default:
		bad(`file: a case file whose name does not end in %s must name its .halo file ("file": "flow.halo")`, Suffix)
	}
	if c.File != "" {
		c.abs = abs(dir, c.File)
	}
	if v, ok := obj.get("inputs"); ok {
		if err := strictUnmarshal(v, &c.Inputs); err != nil || c.Inputs == nil {
			bad(`inputs: want an object of parameter names and values ({"name": "Ada"})`)
		}
	}
	if c.Inputs == nil {
		c.Inputs = map[string]any{}
	}
	if v, ok := obj.get("mocks"); ok {
		c.Mocks = v
		var s string
		if json.Unmarshal(v, &s) == nil {
			// A mocks file beside the case.
			p := s
			if !filepath.IsAbs(p) {
				p = filepath.Join(base, p)
			}
			data, err := readLimited(abs(dir, p))
			if err != nil {
				bad("mocks: the mocks file %s: %v", p, err)
			}
			c.Mocks, c.mocksDir = data, filepath.Dir(abs(dir, p))
		} else if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '{' {
			bad("mocks: want an object of targets and answers, or the name of a mocks file")
		}
	}
	if v, ok := obj.get("expect"); ok {
		probs = append(probs, parseExpect(&c.Expect, v)...)
	}
	if c.Expect.Status == "" {
		c.Expect.Status = "completed"
	}
	return probs
}

func parseExpect(e *Expect, raw json.RawMessage) []string {
	obj, err := decodeObject(raw)
	if err != nil {
		return []string{"expect: want an object {status, output, outputSchema, calls, violations, error}: " + err.Error()}
	}
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	for _, f := range obj {
		if !contains(expectKeys, f.Key) {
			bad("expect: unknown key %q (expect has %s)", f.Key, strings.Join(expectKeys, ", "))
		}
	}
	if v, ok := obj.get("status"); ok {
		if json.Unmarshal(v, &e.Status) != nil || (e.Status != "completed" && e.Status != "failed" && e.Status != "paused") {
			bad("expect.status: want completed, failed or paused")
			e.Status = ""
		}
	}
	if v, ok := obj.get("output"); ok {
		e.HasOutput = true
		if err := strictUnmarshal(v, &e.Output); err != nil {
			bad("expect.output: %v", err)
		}
	}
	if v, ok := obj.get("outputSchema"); ok {
		sch, err := compileSchema(v)
		if err != nil {
			bad("expect.outputSchema: %v", err)
		}
		e.Schema = sch
	}
	if v, ok := obj.get("calls"); ok {
		e.HasCalls = true
		if err := json.Unmarshal(v, &e.Calls); err != nil || e.Calls == nil {
			bad(`expect.calls: want a list of "Agent.task" and "Tool.method" targets`)
		}
	}
	if v, ok := obj.get("violations"); ok {
		e.HasViolations = true
		var list []json.RawMessage
		if err := json.Unmarshal(v, &list); err != nil || list == nil {
			bad("expect.violations: want a list of {policy, rule, phase, agent, target, message} objects")
		}
		for i, item := range list {
			vo, err := decodeObject(item)
			if err != nil {
				bad("expect.violations[%d]: want an object: %v", i, err)
				continue
			}
			want := map[string]string{}
			for _, f := range vo {
				if !contains(violationKeys, f.Key) {
					bad("expect.violations[%d]: unknown key %q (a violation has %s)", i, f.Key, strings.Join(violationKeys, ", "))
					continue
				}
				var s string
				if json.Unmarshal(f.Value, &s) != nil {
					bad("expect.violations[%d].%s: want a string", i, f.Key)
				}
				want[f.Key] = s
			}
			e.Violations = append(e.Violations, want)
		}
	}
	if v, ok := obj.get("error"); ok {
		if json.Unmarshal(v, &e.Error) != nil || e.Error == "" {
			bad(`expect.error: want the failed run's error code ("POLICY_VIOLATION")`)
		}
	}
	return probs
}

// noLoader refuses every schema a case's outputSchema refers to: it may use its own $defs
// and the JSON Schema metaschemas, never a file or a URL (a cloned repository's case file
// must not make halo read the machine's files).
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("an outputSchema may refer only to its own $defs, not to %s", url)
}

func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	if _, ok := doc.(map[string]any); !ok {
		if _, isBool := doc.(bool); !isBool {
			return nil, errors.New("want a JSON Schema object")
		}
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	const loc = "https://halo.invalid/expect/outputSchema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// strictUnmarshal decodes one JSON value (numbers as float64, the way run outputs hold them)
// and refuses text after it.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("text after the JSON value")
	}
	return nil
}

// A field is one key of a JSON object, its value as written.
type field struct {
	Key   string
	Value json.RawMessage
}

// An object is a JSON object with its keys in the order written, so --update can rewrite a
// case file without reordering it.
type object []field

func (o object) get(key string) (json.RawMessage, bool) {
	for _, f := range o {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

func (o object) set(key string, v json.RawMessage) object {
	for i := range o {
		if o[i].Key == key {
			o[i].Value = v
			return o
		}
	}
	return append(o, field{key, v})
}

// MarshalJSON writes the object compactly, keys in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// decodeObject reads a JSON object, keeping its keys in order. A key written twice is an
// error, as is anything but one object.
func decodeObject(raw json.RawMessage) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("got %s", kindOf(tok))
	}
	var out object
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		if seen[key] {
			return nil, fmt.Errorf("key %q is written twice", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, field{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the object")
	}
	return out, nil
}

// jsonError says what is wrong with a JSON text.
func jsonError(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the JSON ends early"
	}
	return err.Error()
}

func kindOf(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "a list"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "something else"
}
