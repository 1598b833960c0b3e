package runstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

// sameAsMarshal fails t unless appendRecord writes rec exactly as json.Marshal does, or
// fails where it fails, with the same error.
func sameAsMarshal(t *testing.T, rec *runtime.Record) {
	t.Helper()
	want, wantErr := json.Marshal(rec)
	got, err := appendRecord([]byte("prefix"), rec)
	if (err != nil) != (wantErr != nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("appendRecord error %v, json.Marshal error %v", err, wantErr)
	}
	if err != nil {
		return
	}
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("appendRecord lost what dst held: %q", got)
	}
	if got = got[len("prefix"):]; !bytes.Equal(got, want) {
		t.Fatalf("appendRecord and json.Marshal differ: %s", diff(got, want))
	}
	if _, ok := (encoder{}).record(nil, rec); !ok && wantErr == nil {
		// Not wrong, but the record went through json.Marshal: a type or value the hand
		// encoder should take.
		t.Errorf("the hand encoder gave up on a record json.Marshal writes")
	}
}

var (
	t0   = time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	t1   = time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)
	item = 3
)

// oneStage is a completed one-stage run's record, as the runtime saves it.
func oneStage() *runtime.Record {
	return &runtime.Record{
		RunID: "4f1c0a7be41d2268", File: "greet.halo", Pipeline: "Greet", Status: runtime.Completed,
		Inputs: map[string]any{"name": "Ada"}, Output: "Hello, Ada!",
		Meta: runtime.Meta{RunID: "4f1c0a7be41d2268", Cost: 0.000123, Calls: []runtime.CallInfo{{
			Kind: "llm", Target: "Greeter.greet", Agent: "Greeter", Model: "openai/gpt-4o-mini",
			Usage: &model.Usage{InputTokens: 12, OutputTokens: 5}, Cost: 0.000123, DurationMs: 412,
		}}, Violations: []runtime.ViolationInfo{}},
		Data: map[string]any{"name": "Ada"},
		Events: []runtime.Event{
			{Type: "llm", Time: t0, RunID: "4f1c0a7be41d2268", At: "greet.halo:5:8", Agent: "Greeter",
				Target: "Greeter.greet", Model: "openai/gpt-4o-mini", Prompt: "Say hello to Ada.",
				Answer: "Hello, Ada!", Step: 1, Usage: &model.Usage{InputTokens: 12, OutputTokens: 5},
				Cost: 0.000123, DurationMs: 412, Attempt: 1},
			{Type: "stage", Time: t0, RunID: "4f1c0a7be41d2268", At: "greet.halo:5:8", Target: "Greeter.greet"},
			{Type: "run", Time: t1, RunID: "4f1c0a7be41d2268", Status: runtime.Completed},
		},
		Started: t0, Updated: t1,
		Recording: &runtime.Recording{Calls: []runtime.Recorded{{Kind: "llm", Target: "Greeter.greet", At: "greet.halo:5:8", Step: 1,
			Response: &model.Response{Text: "Hello, Ada!", Message: model.Message{Role: model.Assistant, Text: "Hello, Ada!"},
				Usage: model.Usage{InputTokens: 12, OutputTokens: 5}, Cost: 0.000123, StopReason: model.StopEnd, Attempts: 1}}}},
	}
}

// TestRecordJSON: appendRecord writes records of every kind exactly as json.Marshal does.
func TestRecordJSON(t *testing.T) {
	cycle := map[string]any{}
	cycle["self"] = cycle
	deep := any("bottom")
	for i := 0; i < 300; i++ {
		deep = []any{map[string]any{"d": deep}}
	}
	type named string
	cases := map[string]func(r *runtime.Record){
		"completed": func(r *runtime.Record) {},
		"zero":      func(r *runtime.Record) { *r = runtime.Record{} },
		"failed": func(r *runtime.Record) {
			r.Status, r.Output = runtime.Failed, nil
			r.Error = &runtime.ErrorInfo{Code: "TOOL", Message: "Files.read: <no> & \"such\" file", At: "a.halo:3:4",
				Detail: json.RawMessage(" {\"reason\" : \"a <b> & c\u2028\", \"n\": [1, 2.5e3, true, null]}\n")}
			r.Events = append(r.Events, runtime.Event{Type: "run", Time: t1, Status: runtime.Failed, Error: r.Error})
		},
		"paused": func(r *runtime.Record) {
			r.Status = runtime.Paused
			r.Meta.Paused = &runtime.PauseInfo{WaitingFor: "approval", Question: "Allow Clerk to call Files.write with {\"path\":\"x\"}? (policy Careful)",
				Named: map[string]any{"target": "Files.write", "args": map[string]any{"path": "x"}, "policy": "Careful", "agent": "Clerk"}}
			r.Resume = &runtime.ResumePoint{Stage: 2, Loops: map[int]int{10: 1, 2: 3}, Inputs: map[int]any{1: "in"}, Outputs: map[int]any{1: []any{1.0}},
				Agent: &runtime.AgentPause{Target: "Clerk.work", System: "be brief", Call: runtime.WaitingCall{ID: "c1", Target: "Files.write", Args: json.RawMessage(`{"path": "x"}`)}}}
			r.Mocks = map[string]int{"b": 2, "a": 1, "<&>": 0}
		},
		"paused yield": func(r *runtime.Record) {
			r.Status = runtime.Paused
			r.Meta.Paused = &runtime.PauseInfo{WaitingFor: "yield", Question: map[string]any{"ask": "which?", "options": []string{"a", "b"}}}
			r.Resume = &runtime.ResumePoint{Stage: 1}
		},
		"recording": func(r *runtime.Record) {
			r.Recording.Methods = map[string][]tool.Method{
				"Files": {{Name: "read", Description: "Reads <a> file.", Params: json.RawMessage(`{"type": "object"}`), Effect: tool.Read},
					{Name: "list", PipelineOnly: true}},
				"Alpha": nil,
			}
			r.Recording.Calls = append(r.Recording.Calls,
				runtime.Recorded{Kind: "tool", Target: "Files.read", Lane: "*1#3", Args: json.RawMessage(`{"path":"notes.md"}`),
					Result: json.RawMessage(`"mail bob@example.com\n"`), Mocked: true},
				runtime.Recorded{Kind: "approval", Target: "Files.write", Answer: map[string]any{"approved": true, "reason": ""}},
				runtime.Recorded{Kind: "tool", Target: "Files.run", Error: &runtime.RecordedError{Code: "TOOL", Message: "boom", Retryable: true, Detail: json.RawMessage(`{"x":1}`)}},
				runtime.Recorded{Kind: "tool", Target: "Files.run", Error: &runtime.RecordedError{Message: "no code"}},
				runtime.Recorded{Kind: "llm", Target: "A.t", Value: map[string]any{"mocked": []any{1.0, "two"}}},
				runtime.Recorded{Kind: "llm", Target: "A.t", Step: 2, Response: &model.Response{
					ToolCalls: []model.ToolCall{{ID: "c1", Name: "Files__read", Args: json.RawMessage(`{ "path" : "a" }`)}, {ID: "c2", Name: "x"}},
					Message: model.Message{Role: model.Assistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "Files__read", Args: json.RawMessage(`{}`)}},
						ToolResults: []model.ToolResult{{CallID: "c1", Name: "n", Content: "c", IsError: true}, {CallID: "c2"}},
						Native:      &model.Native{Provider: "anthropic", Data: json.RawMessage(`[{"type":"text"}]`)}},
					StopReason: model.StopToolCalls, NativeStop: "tool_use", Model: "gpt-4o-mini-2024", Attempts: 2, Raw: json.RawMessage(`{"raw":1}`)}},
			)
		},
		"no recording calls": func(r *runtime.Record) { r.Recording = &runtime.Recording{} },
		"events": func(r *runtime.Record) {
			r.Events = append(r.Events,
				runtime.Event{Type: "tool", Time: t0.In(time.FixedZone("X", 5*3600+30*60)), Target: "Files.read", Args: json.RawMessage(`{"path": "a b"}`),
					Output: map[string]any{"text": "x"}, DurationMs: 3, Mocked: true, Item: &item, Arm: "x > 1"},
				runtime.Event{Type: "agent_tool", Time: t0.In(time.FixedZone("Y", -8*3600)), Decision: "declined", Detail: "no <way>", ToolCalls: []string{"a", "b<"}},
				runtime.Event{Type: "violation", Policy: "P", Rule: "Block(PII)", Phase: "input", Message: "m", Channel: "c"},
				runtime.Event{Type: "progress", Progress: &tool.Progress{Filled: 0.5, Total: 1, Message: "half"}},
				runtime.Event{Type: "progress", Progress: &tool.Progress{}},
				runtime.Event{Type: "llm", Output: false, Cost: -0.0, Step: 0},
			)
			r.Meta.Violations = []runtime.ViolationInfo{{Policy: "P", Rule: "R", Phase: "output", Message: "m", Agent: "A", Target: "T"}, {}}
			r.Meta.Calls = append(r.Meta.Calls, runtime.CallInfo{Kind: "tool", Target: "Files.read", Mocked: true, Error: "TOOL"}, runtime.CallInfo{})
		},
		"nil slices": func(r *runtime.Record) {
			r.Events, r.Meta.Calls, r.Meta.Violations, r.Inputs, r.Data = nil, nil, nil, nil, nil
		},
		"empty": func(r *runtime.Record) {
			r.Events, r.Meta.Calls, r.Meta.Violations, r.Inputs, r.Data = []runtime.Event{}, []runtime.CallInfo{}, []runtime.ViolationInfo{}, map[string]any{}, map[string]any{}
		},
		"strings": func(r *runtime.Record) {
			s := "<script>&amp;</script> \"q\" \\ \b\f\n\r\t \x00\x01\x1f\x7f é 日本 \u2028\u2029 \xff\xfe bad \xe2\x80 cut \xed\xa0\x80 surrogate 🎉"
			r.Inputs = map[string]any{s: s, "": "", "z": "\xe2\x80\xa8"}
			r.Output = s
			r.Events[0].Prompt, r.Events[0].Answer = s, s+"\xe2"
			r.Pipeline, r.File = s, s
		},
		"floats": func(r *runtime.Record) {
			r.Output = []any{0.0, math.Copysign(0, -1), 1e21, 1e20, 1e-7, 1e-6, 9.99e-7, 123456789.0, 0.1, float64(1 << 53), float64(1<<53 + 1), 12345678901234567890.0, float64(1 << 62), -1.5e-300,
				math.MaxFloat64, math.SmallestNonzeroFloat64, float32(0.1), float32(1e21), float32(1e-7), float32(3.4e38), float32(math.Copysign(0, -1))}
			r.Meta.Cost = 1e-9
			r.Events[0].Cost = 2.5e22
		},
		"numbers": func(r *runtime.Record) {
			r.Output = []any{1, -2, int8(-3), int16(4), int32(-5), int64(math.MinInt64), uint(6), uint8(7), uint16(8), uint32(9), uint64(math.MaxUint64), uintptr(10),
				json.Number("12.5e-3"), json.Number(""), json.Number("-0"), true, false, nil}
		},
		"nested": func(r *runtime.Record) {
			r.Data = map[string]any{"list": []any{map[string]any{"b": 2.0, "a": []any{}}, []string{"x"}, []string(nil), []any(nil)},
				"m": map[string]string{"z": "<", "a": ">"}, "nilmap": map[string]any(nil), "nilsmap": map[string]string(nil),
				"raw": json.RawMessage(` [ 1 , "<\u2028>" ] `), "nilraw": json.RawMessage(nil), "deep": deep}
		},
		"other types": func(r *runtime.Record) {
			r.Output = map[string]any{"named": named("x<"), "struct": struct {
				A int `json:"a"`
				B string
			}{1, "<"}, "bytes": []byte("hi"), "time": t0, "ptr": &item, "nilptr": (*int)(nil), "ints": []int{1, 2}, "intmap": map[int]string{10: "a", 2: "b"}}
		},
		"many keys": func(r *runtime.Record) {
			m := map[string]any{}
			for _, k := range strings.Fields("q w e r t y u i o p a s d f g h j k l z x c v b n m Q W E R T Y") {
				m[k] = k
			}
			r.Inputs, r.Data = m, m
		},
		"odd times": func(r *runtime.Record) {
			r.Started = time.Time{}
			r.Updated = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", -(23*3600+59*60)))
		},
		// What json.Marshal refuses, appendRecord refuses with the same error.
		"NaN":             func(r *runtime.Record) { r.Output = math.NaN() },
		"Inf cost":        func(r *runtime.Record) { r.Meta.Cost = math.Inf(1) },
		"Inf float32":     func(r *runtime.Record) { r.Data = map[string]any{"f": float32(math.Inf(-1))} },
		"NaN event cost":  func(r *runtime.Record) { r.Events[0].Cost = math.NaN() },
		"NaN progress":    func(r *runtime.Record) { r.Events[0].Progress = &tool.Progress{Total: math.NaN()} },
		"NaN call cost":   func(r *runtime.Record) { r.Meta.Calls[0].Cost = math.NaN() },
		"NaN response":    func(r *runtime.Record) { r.Recording.Calls[0].Response.Cost = math.NaN() },
		"year 10000":      func(r *runtime.Record) { r.Updated = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"year -1":         func(r *runtime.Record) { r.Events[1].Time = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) },
		"zone 24h":        func(r *runtime.Record) { r.Started = time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600)) },
		"bad raw":         func(r *runtime.Record) { r.Events[0].Args = json.RawMessage(`{"a":`) },
		"bad detail":      func(r *runtime.Record) { r.Error = &runtime.ErrorInfo{Detail: json.RawMessage(`nope`)} },
		"empty raw value": func(r *runtime.Record) { r.Output = json.RawMessage{} },
		"bad tool args": func(r *runtime.Record) {
			r.Recording.Calls[0].Response.ToolCalls = []model.ToolCall{{ID: "c", Args: json.RawMessage{}}}
		},
		"bad number":  func(r *runtime.Record) { r.Data = map[string]any{"n": json.Number("1e")} },
		"cycle":       func(r *runtime.Record) { r.Data = map[string]any{"c": cycle} },
		"unsupported": func(r *runtime.Record) { r.Output = map[string]any{"f": func() {}} },
		"bad resume": func(r *runtime.Record) {
			r.Resume = &runtime.ResumePoint{Inputs: map[int]any{1: math.Inf(1)}}
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			rec := oneStage()
			change(rec)
			sameAsMarshal(t, rec)
		})
	}
}

// handEncoded lists the types appendRecord writes by hand, each with a way to write one value
// and the value json.Marshal compares it with.
var handEncoded = []struct {
	typ reflect.Type
	// enc writes v (a pointer to a value of typ); wrap gives what json.Marshal writes the
	// same way (v itself, or v placed where enc put it).
	enc  func(b []byte, v any) ([]byte, bool)
	wrap func(v any) any
}{
	{reflect.TypeFor[runtime.Record](), func(b []byte, v any) ([]byte, bool) { return encoder{}.record(b, v.(*runtime.Record)) }, nil},
	{reflect.TypeFor[runtime.Meta](), func(b []byte, v any) ([]byte, bool) { return encoder{}.meta(b, v.(*runtime.Meta)) }, nil},
	{reflect.TypeFor[runtime.CallInfo](), func(b []byte, v any) ([]byte, bool) { return jsonCall(b, v.(*runtime.CallInfo)) }, nil},
	{reflect.TypeFor[runtime.ViolationInfo](), func(b []byte, v any) ([]byte, bool) { return jsonViolation(b, v.(*runtime.ViolationInfo)), true }, nil},
	{reflect.TypeFor[runtime.PauseInfo](), func(b []byte, v any) ([]byte, bool) { return encoder{}.pauseInfo(b, v.(*runtime.PauseInfo)) }, nil},
	{reflect.TypeFor[runtime.Event](), func(b []byte, v any) ([]byte, bool) { return encoder{}.event(b, v.(*runtime.Event)) }, nil},
	{reflect.TypeFor[runtime.ErrorInfo](), func(b []byte, v any) ([]byte, bool) { return jsonErrorInfo(b, v.(*runtime.ErrorInfo)) }, nil},
	{reflect.TypeFor[model.Usage](), func(b []byte, v any) ([]byte, bool) { return jsonUsage(b, v.(*model.Usage)), true }, nil},
	{reflect.TypeFor[tool.Progress](), func(b []byte, v any) ([]byte, bool) { return jsonProgress(b, v.(*tool.Progress)) }, nil},
	{reflect.TypeFor[runtime.Recording](), func(b []byte, v any) ([]byte, bool) { return encoder{}.recording(b, v.(*runtime.Recording)) }, nil},
	{reflect.TypeFor[runtime.Recorded](), func(b []byte, v any) ([]byte, bool) { return encoder{}.recorded(b, v.(*runtime.Recorded)) }, nil},
	{reflect.TypeFor[runtime.RecordedError](), func(b []byte, v any) ([]byte, bool) { return jsonRecordedError(b, v.(*runtime.RecordedError)) }, nil},
	{reflect.TypeFor[tool.Method](), func(b []byte, v any) ([]byte, bool) { return jsonMethod(b, v.(*tool.Method)) }, nil},
	{reflect.TypeFor[model.Response](), func(b []byte, v any) ([]byte, bool) { return jsonResponse(b, v.(*model.Response)) }, nil},
	{reflect.TypeFor[model.Message](), func(b []byte, v any) ([]byte, bool) { return jsonMessage(b, v.(*model.Message)) }, nil},
	{reflect.TypeFor[model.ToolCall](), func(b []byte, v any) ([]byte, bool) {
		return jsonToolCalls(b, []model.ToolCall{*v.(*model.ToolCall)})
	}, func(v any) any { return []model.ToolCall{*v.(*model.ToolCall)} }},
	{reflect.TypeFor[model.ToolResult](), func(b []byte, v any) ([]byte, bool) {
		return jsonMessage(b, &model.Message{ToolResults: []model.ToolResult{*v.(*model.ToolResult)}})
	}, func(v any) any { return &model.Message{ToolResults: []model.ToolResult{*v.(*model.ToolResult)}} }},
	{reflect.TypeFor[model.Native](), func(b []byte, v any) ([]byte, bool) {
		return jsonMessage(b, &model.Message{Native: v.(*model.Native)})
	}, func(v any) any { return &model.Message{Native: v.(*model.Native)} }},
}

// TestRecordJSONFields: for every type appendRecord writes by hand, every field is written as
// json.Marshal writes it: all of them set, none set, each one alone set and each one alone
// left zero (omitempty). A field added to one of these types fails here until recordjson.go
// writes it.
func TestRecordJSONFields(t *testing.T) {
	for _, h := range handEncoded {
		t.Run(h.typ.String(), func(t *testing.T) {
			check := func(what string, v reflect.Value) {
				t.Helper()
				p := v.Addr().Interface()
				want, err := json.Marshal(p)
				if h.wrap != nil {
					want, err = json.Marshal(h.wrap(p))
				}
				if err != nil {
					t.Fatalf("%s: json.Marshal: %v", what, err)
				}
				got, ok := h.enc(nil, p)
				if !ok {
					t.Errorf("%s: the hand encoder gave up on a value json.Marshal writes as %.300s", what, want)
				} else if !bytes.Equal(got, want) {
					t.Errorf("%s: the hand encoder and json.Marshal differ: %s", what, diff(got, want))
				}
			}
			zero := reflect.New(h.typ).Elem()
			check("zero", zero)
			full := reflect.New(h.typ).Elem()
			fill(t, full, 0)
			check("every field set", full)
			for i := 0; i < h.typ.NumField(); i++ {
				f := h.typ.Field(i)
				if !f.IsExported() {
					continue
				}
				one := reflect.New(h.typ).Elem()
				fill(t, one.Field(i), 0)
				check(f.Name+" alone set", one)
				all := reflect.New(h.typ).Elem()
				fill(t, all, 0)
				all.Field(i).SetZero()
				check(f.Name+" alone zero", all)
			}
		})
	}
}

// fill sets v, and every field, element and entry inside it, to something not zero, with
// characters encoding/json escapes in every string.
func fill(t *testing.T, v reflect.Value, depth int) {
	t.Helper()
	if depth > 8 {
		return
	}
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 5, 6, 7, 8, 9, 10, time.FixedZone("", 3600))))
		return
	case reflect.TypeFor[json.RawMessage]():
		v.Set(reflect.ValueOf(json.RawMessage(" {\"a\" : [1, \"<&>\u2028\"]}\n")))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("v<&>\"\n\u2028é\xff")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1e-7)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(t, v.Index(0), depth+1)
		fill(t, v.Index(1), depth+1)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for i := 0; i < 2; i++ {
			k := reflect.New(v.Type().Key()).Elem()
			fill(t, k, depth+1)
			if k.Kind() == reflect.String {
				k.SetString(k.String() + string(rune('b'-i)))
			} else if k.CanInt() {
				k.SetInt(int64(10 - 8*i))
			}
			e := reflect.New(v.Type().Elem()).Elem()
			fill(t, e, depth+1)
			v.SetMapIndex(k, e)
		}
	case reflect.Interface:
		if v.NumMethod() != 0 {
			return // not a JSON value; no type of a record holds one
		}
		v.Set(reflect.ValueOf(map[string]any{"b": []any{"x<", 1.5, true, nil, json.Number("2")}, "a": map[string]any{}}))
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), depth+1)
			}
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(t, v.Index(i), depth+1)
		}
	default:
		t.Fatalf("fill: %s (%s) is not a JSON value; teach fill and recordjson.go about it", v.Type(), v.Kind())
	}
}

// FuzzRecordJSON: a record built from any strings, numbers and JSON is written by appendRecord
// exactly as json.Marshal writes it, and refused where json.Marshal refuses it.
func FuzzRecordJSON(f *testing.F) {
	f.Add("Ada", "Say <hello> & bye", 0.1, 1e21, int64(1767323045), []byte(`{"a":[1,"x",{"b":null}],"c":1e-7}`), uint8(0))
	f.Add("\xff\u2028", "\x00\t", -0.0, 1e-7, int64(-62135596801), []byte(`[1, 2 , "\u2028"]`), uint8(1))
	f.Add("", "", math.NaN(), math.Inf(1), int64(253402300800), []byte(`{"a":`), uint8(2))
	f.Add("12.5", "x", 123456789.0, 1e300, int64(0), []byte(` "<b>" `), uint8(7))
	f.Fuzz(func(t *testing.T, s1, s2 string, f1, f2 float64, secs int64, raw []byte, flags uint8) {
		var v any
		if flags&1 == 0 {
			json.Unmarshal(raw, &v)
		} else {
			d := json.NewDecoder(bytes.NewReader(raw))
			d.UseNumber()
			d.Decode(&v)
		}
		rec := oneStage()
		rec.RunID, rec.Pipeline = s1, s2
		rec.Inputs = map[string]any{"name": s1, s2: f1, "v": v}
		rec.Output = v
		rec.Data = map[string]any{"x": []any{f1, float32(f2), s2, v, map[string]string{s1: s2}, []string{s1, s2}}}
		rec.Meta.Cost = f2
		rec.Events[0].Prompt, rec.Events[0].Answer, rec.Events[0].Output = s1, s2, v
		rec.Events[1].Time = time.Unix(secs, int64(f1)).UTC()
		rec.Started = time.Unix(secs/2, 0).In(time.FixedZone("", int(secs%(26*3600))))
		if flags&2 != 0 {
			rec.Events[0].Args = raw
			rec.Error = &runtime.ErrorInfo{Code: s1, Message: s2, Detail: raw}
		}
		if flags&4 != 0 {
			rec.Recording.Calls[0].Result = raw
			rec.Recording.Calls[0].Answer = json.Number(s1)
		}
		if flags&8 != 0 {
			rec.Meta.Paused = &runtime.PauseInfo{WaitingFor: s1, Question: v, Named: map[string]any{s2: f2}}
			rec.Resume = &runtime.ResumePoint{Stage: int(flags), Inputs: map[int]any{1: v}}
		}
		want, wantErr := json.Marshal(rec)
		got, err := appendRecord(nil, rec)
		if (err != nil) != (wantErr != nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("appendRecord error %v, json.Marshal error %v", err, wantErr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("appendRecord and json.Marshal differ: %s", diff(got, want))
		}
	})
}

// diff says where got and want part, with a little of each from a bit before there.
func diff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(i-60, 0)
	return fmt.Sprintf("at byte %d\n got …%.160s\nwant …%.160s", i, got[from:], want[from:])
}

// BenchmarkRecordEncode: appendRecord beside json.Marshal and the v2 JSON API
// (github.com/go-json-experiment/json, with its own defaults and with v1's options) on a
// completed one-stage run's record: whether the hand encoder is still needed.
func BenchmarkRecordEncode(b *testing.B) {
	rec := oneStage()
	want, _ := json.Marshal(rec)
	if got, _ := appendRecord(nil, rec); !bytes.Equal(got, want) {
		b.Fatalf("appendRecord wrote\n %s\nwant\n %s", got, want)
	}
	c := &commits{}
	for _, enc := range []struct {
		name string
		enc  func() ([]byte, error)
	}{
		{"appendRecord", func() ([]byte, error) { return appendRecord(make([]byte, 0, len(want)+len(want)/8), rec) }},
		{"json.Marshal", func() ([]byte, error) { return json.Marshal(rec) }},
		{"jsonv2.Marshal", func() ([]byte, error) { return jsonv2.Marshal(rec) }},
		{"jsonv2.Marshal-v1options", func() ([]byte, error) { return jsonv2.Marshal(rec, jsonv1.DefaultOptionsV1()) }},
		// What the store does with a record it is given (pending.encode, on the request
		// path): the JSON and the list row's columns; and that with what its commit does
		// (commits.packAll): the JSON packed, its buffer given back.
		{"store", func() ([]byte, error) {
			p := &pending{id: rec.RunID, rec: rec}
			p.encode(&c.bufs)
			raw, err := p.raw, p.err
			p.buf.release(&c.bufs) // as its commit does
			return raw, err
		}},
		{"store-pack", func() ([]byte, error) {
			p := &pending{id: rec.RunID, rec: rec}
			c.packAll(map[string]*pending{p.id: p})
			return p.data, p.err
		}},
	} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(want)))
			for b.Loop() {
				if _, err := enc.enc(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
