package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"halolang.dev/halo/internal/linediff"

	"halolang.dev/halo/host/runtime"
)

// compare checks a finished run against c's expect and returns what differs.
func compare(c *Case, res *runtime.Result) []Failure {
	e := c.Expect
	var out []Failure
	if string(res.Status) != e.Status {
		msg := fmt.Sprintf("want %s, got %s", e.Status, res.Status)
		if res.Error != nil {
			at := ""
			if res.Error.At != "" {
				at = res.Error.At + ": "
			}
			msg += fmt.Sprintf(": %s%s [%s]", at, res.Error.Message, res.Error.Code)
		}
		if res.Status == runtime.Paused && res.Meta.Paused != nil {
			msg += fmt.Sprintf(" (waiting on %s)", res.Meta.Paused.WaitingFor)
		}
		out = append(out, Failure{Check: "status", Message: msg, Want: e.Status, Got: res.Status})
	}
	if e.Error != "" {
		got := ""
		if res.Error != nil {
			got = res.Error.Code
		}
		if got != e.Error {
			out = append(out, Failure{Check: "error", Message: fmt.Sprintf("want %s, got %s", e.Error, orNone(got)), Want: e.Error, Got: got})
		}
	}
	got := normalize(res.Output)
	if e.HasOutput {
		want := normalize(e.Output)
		if !reflect.DeepEqual(want, got) {
			out = append(out, Failure{Check: "output", Want: want, Got: got, Diff: diff(lines(want), lines(got))})
		}
	}
	if e.Schema != nil {
		if err := e.Schema.Validate(got); err != nil {
			out = append(out, Failure{Check: "outputSchema", Message: "the output does not fit the schema: " + schemaError(err), Got: got})
		}
	}
	if e.HasCalls {
		calls := []string{}
		for _, ci := range res.Meta.Calls {
			calls = append(calls, ci.Target)
		}
		if !reflect.DeepEqual(e.Calls, calls) {
			out = append(out, Failure{Check: "calls", Want: e.Calls, Got: calls, Diff: diff(e.Calls, calls)})
		}
	}
	if e.HasViolations {
		gotV := make([]map[string]string, len(res.Meta.Violations))
		for i, v := range res.Meta.Violations {
			gotV[i] = map[string]string{"policy": v.Policy, "rule": v.Rule, "phase": v.Phase, "agent": v.Agent, "target": v.Target, "message": v.Message}
		}
		if !violationsMatch(e.Violations, gotV) {
			out = append(out, Failure{Check: "violations", Want: e.Violations, Got: gotV,
				Diff: diff(violationLines(e.Violations, nil), violationLines(gotV, e.Violations))})
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// violationsMatch reports whether got has as many violations as want, each with the fields
// its wanted one gives (a message is matched when it is contained).
func violationsMatch(want, got []map[string]string) bool {
	if len(want) != len(got) {
		return false
	}
	for i, w := range want {
		for k, v := range w {
			if k == "message" {
				if !strings.Contains(got[i][k], v) {
					return false
				}
			} else if got[i][k] != v {
				return false
			}
		}
	}
	return true
}

// violationLines shows violations one a line, with the fields the wanted ones give (all of
// them when like is nil), so a diff shows what differs and not every field.
func violationLines(vs []map[string]string, like []map[string]string) []string {
	var out []string
	for i, v := range vs {
		keys := violationKeys
		if like != nil && i < len(like) {
			keys = nil
			for _, k := range violationKeys {
				if _, ok := like[i][k]; ok {
					keys = append(keys, k)
				}
			}
		}
		var parts []string
		for _, k := range keys {
			if val, ok := v[k]; ok && (val != "" || like == nil) {
				parts = append(parts, fmt.Sprintf("%s: %q", k, val))
			}
		}
		out = append(out, "{"+strings.Join(parts, ", ")+"}")
	}
	return out
}

// normalize turns a value into what JSON makes of it (numbers float64, structs maps), so a
// case's expected value and a run's output compare as JSON values.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// lines shows a value for a diff: a string's own lines, anything else as indented JSON.
func lines(v any) []string {
	if s, ok := v.(string); ok {
		b, _ := json.Marshal(s)
		if !strings.Contains(s, "\n") {
			return []string{string(b)}
		}
		return strings.Split(s, "\n")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

func schemaError(err error) string {
	msg := err.Error()
	// The library's first line names the schema's made-up location; the causes follow.
	if _, rest, ok := strings.Cut(msg, "\n"); ok {
		var causes []string
		for _, l := range strings.Split(rest, "\n") {
			if l = strings.TrimPrefix(strings.TrimSpace(l), "- "); l != "" {
				causes = append(causes, l)
			}
		}
		return strings.Join(causes, "; ")
	}
	return msg
}

// maxDiffLines bounds a diff's cost: longer values are shown whole, one after the other.
const maxDiffLines = 2000

// diff shows want against got line by line (linediff.Diff).
func diff(want, got []string) string { return linediff.Diff(want, got, maxDiffLines) }
