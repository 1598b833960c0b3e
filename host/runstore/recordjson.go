package runstore

import (
	"encoding/json"
	"halolang.dev/halo/internal/jsonappend"
	"strconv"
	"time"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

// The run record's JSON, written by hand: json.Marshal (reflection) was a tenth of halo mcp's
// processor time per call, and the v2 JSON API (github.com/go-json-experiment/json) is no
// faster on a record, which is mostly maps of any: BenchmarkRecordEncode, in one run on the
// 2-core development machine (shared with other builds), 1.8 KB record, 3 runs each:
// appendRecord 5.5-9.6 µs, json.Marshal 13.5-62 µs, v2 Marshal 39-87 µs, v2 with v1's
// options 31-74 µs (an earlier, quieter run: 4.3-6.7, 12.9-22.6, 22-36 and 13-24 µs).
// appendRecord gives exactly the bytes json.Marshal gives, for every record: the types
// every run has (Record, Meta, Event, Recording and the ones they hold) are encoded here,
// field by field in declaration order with the same tags; a rare, deep field (Resume, Seal)
// and any value of a type not handled here go through json.Marshal on their own.
// Whatever encoding/json would refuse (a NaN, a time outside years 0-9999, invalid raw JSON,
// a cycle) makes the whole record go through json.Marshal, so the error is its own.
//
// Adding a field to one of these types means adding it here: TestRecordJSONFields fills every
// field and fails until this file writes it as json.Marshal does.

// MarshalRecord returns rec's JSON, the bytes json.Marshal(rec) gives, written by hand: both
// stores save records with it.
func MarshalRecord(rec *runtime.Record) ([]byte, error) { return appendRecord(nil, rec) }

// appendRecord appends rec's JSON, as json.Marshal(rec) gives it, to dst.
func appendRecord(dst []byte, rec *runtime.Record) ([]byte, error) {
	if b, ok := (encoder{}).record(dst, rec); ok {
		return b, nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// encoder appends JSON; each method returns false where encoding/json would fail (or where
// the encoder is not sure), and the caller then leaves the whole record to json.Marshal.
type encoder struct{}

func (e encoder) record(b []byte, r *runtime.Record) ([]byte, bool) {
	ok := true
	b = append(b, `{"runId":`...)
	b = appendString(b, r.RunID)
	if r.File != "" {
		b = append(b, `,"file":`...)
		b = appendString(b, r.File)
	}
	b = append(b, `,"pipeline":`...)
	b = appendString(b, r.Pipeline)
	b = append(b, `,"status":`...)
	b = appendString(b, string(r.Status))
	b = append(b, `,"inputs":`...)
	if b, ok = e.object(b, r.Inputs); !ok {
		return b, false
	}
	b = append(b, `,"output":`...)
	if b, ok = e.value(b, r.Output); !ok {
		return b, false
	}
	if r.Error != nil {
		b = append(b, `,"error":`...)
		if b, ok = jsonErrorInfo(b, r.Error); !ok {
			return b, false
		}
	}
	b = append(b, `,"meta":`...)
	if b, ok = e.meta(b, &r.Meta); !ok {
		return b, false
	}
	b = append(b, `,"data":`...)
	if b, ok = e.object(b, r.Data); !ok {
		return b, false
	}
	b = append(b, `,"events":`...)
	if r.Events == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Events {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = e.event(b, &r.Events[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	if r.Resume != nil {
		b = append(b, `,"resume":`...)
		if b, ok = jsonMarshal(b, r.Resume); !ok {
			return b, false
		}
	}
	if len(r.Mocks) > 0 {
		b = append(b, `,"mocks":`...)
		b = appendIntMap(b, r.Mocks)
	}
	b = append(b, `,"started":`...)
	if b, ok = appendTime(b, r.Started); !ok {
		return b, false
	}
	b = append(b, `,"updated":`...)
	if b, ok = appendTime(b, r.Updated); !ok {
		return b, false
	}
	if r.Recording != nil {
		b = append(b, `,"recording":`...)
		if b, ok = e.recording(b, r.Recording); !ok {
			return b, false
		}
	}
	if r.Seal != nil { // a paused record's: rare
		b = append(b, `,"seal":`...)
		if b, ok = jsonMarshal(b, r.Seal); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

func (e encoder) meta(b []byte, m *runtime.Meta) ([]byte, bool) {
	ok := true
	b = append(b, `{"runId":`...)
	b = appendString(b, m.RunID)
	b = append(b, `,"cost":`...)
	if b, ok = appendFloat(b, m.Cost, 64); !ok {
		return b, false
	}
	b = append(b, `,"calls":`...)
	if m.Calls == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range m.Calls {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = jsonCall(b, &m.Calls[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"violations":`...)
	if m.Violations == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range m.Violations {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonViolation(b, &m.Violations[i])
		}
		b = append(b, ']')
	}
	b = append(b, `,"paused":`...)
	if m.Paused == nil {
		b = append(b, "null"...)
	} else if b, ok = e.pauseInfo(b, m.Paused); !ok {
		return b, false
	}
	if len(m.Retrievals) > 0 {
		b = append(b, `,"retrievals":[`...)
		for i := range m.Retrievals {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonRetrieval(b, &m.Retrievals[i])
		}
		b = append(b, ']')
	}
	return append(b, '}'), true
}

func jsonCall(b []byte, c *runtime.CallInfo) ([]byte, bool) {
	ok := true
	b = append(b, `{"kind":`...)
	b = appendString(b, c.Kind)
	b = append(b, `,"target":`...)
	b = appendString(b, c.Target)
	if c.Agent != "" {
		b = append(b, `,"agent":`...)
		b = appendString(b, c.Agent)
	}
	if c.Model != "" {
		b = append(b, `,"model":`...)
		b = appendString(b, c.Model)
	}
	if c.Usage != nil {
		b = append(b, `,"usage":`...)
		b = jsonUsage(b, c.Usage)
	}
	if c.Cost != 0 {
		b = append(b, `,"cost":`...)
		if b, ok = appendFloat(b, c.Cost, 64); !ok {
			return b, false
		}
	}
	b = append(b, `,"durationMs":`...)
	b = strconv.AppendInt(b, c.DurationMs, 10)
	if c.Mocked {
		b = append(b, `,"mocked":true`...)
	}
	if c.Error != "" {
		b = append(b, `,"error":`...)
		b = appendString(b, c.Error)
	}
	if c.Unpriced {
		b = append(b, `,"unpriced":true`...)
	}
	b = optString(b, `,"setBy":`, c.SetBy)
	return append(b, '}'), true
}

func jsonRetrieval(b []byte, r *runtime.RetrievalInfo) []byte {
	b = append(b, `{"store":`...)
	b = appendString(b, r.Store)
	b = append(b, `,"agent":`...)
	b = appendString(b, r.Agent)
	b = append(b, `,"target":`...)
	b = appendString(b, r.Target)
	b = append(b, `,"hits":`...)
	b = strconv.AppendInt(b, int64(r.Hits), 10)
	if r.Withheld != 0 {
		b = append(b, `,"withheld":`...)
		b = strconv.AppendInt(b, int64(r.Withheld), 10)
	}
	return append(b, '}')
}

func jsonViolation(b []byte, v *runtime.ViolationInfo) []byte {
	b = append(b, `{"policy":`...)
	b = appendString(b, v.Policy)
	b = append(b, `,"rule":`...)
	b = appendString(b, v.Rule)
	b = append(b, `,"phase":`...)
	b = appendString(b, v.Phase)
	b = append(b, `,"message":`...)
	b = appendString(b, v.Message)
	if v.Agent != "" {
		b = append(b, `,"agent":`...)
		b = appendString(b, v.Agent)
	}
	if v.Target != "" {
		b = append(b, `,"target":`...)
		b = appendString(b, v.Target)
	}
	return append(b, '}')
}

func (e encoder) pauseInfo(b []byte, p *runtime.PauseInfo) ([]byte, bool) {
	ok := true
	b = append(b, `{"waitingFor":`...)
	b = appendString(b, p.WaitingFor)
	b = append(b, `,"question":`...)
	if b, ok = e.value(b, p.Question); !ok {
		return b, false
	}
	if len(p.Named) > 0 {
		b = append(b, `,"named":`...)
		if b, ok = e.object(b, p.Named); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

func jsonErrorInfo(b []byte, x *runtime.ErrorInfo) ([]byte, bool) {
	ok := true
	b = append(b, `{"code":`...)
	b = appendString(b, x.Code)
	b = append(b, `,"message":`...)
	b = appendString(b, x.Message)
	if x.At != "" {
		b = append(b, `,"at":`...)
		b = appendString(b, x.At)
	}
	if len(x.Detail) > 0 {
		b = append(b, `,"detail":`...)
		if b, ok = appendRaw(b, x.Detail); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

func jsonUsage(b []byte, u *model.Usage) []byte {
	b = append(b, `{"inputTokens":`...)
	b = strconv.AppendInt(b, int64(u.InputTokens), 10)
	b = append(b, `,"outputTokens":`...)
	b = strconv.AppendInt(b, int64(u.OutputTokens), 10)
	return append(b, '}')
}

func jsonProgress(b []byte, p *tool.Progress) ([]byte, bool) {
	ok := true
	b = append(b, `{"filled":`...)
	if b, ok = appendFloat(b, p.Filled, 64); !ok {
		return b, false
	}
	b = append(b, `,"total":`...)
	if b, ok = appendFloat(b, p.Total, 64); !ok {
		return b, false
	}
	if p.Message != "" {
		b = append(b, `,"message":`...)
		b = appendString(b, p.Message)
	}
	return append(b, '}'), true
}

// optString appends `,"name":` and s when s is not empty (omitempty); name is written as is.
func optString(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, name...)
	return appendString(b, s)
}

func (e encoder) event(b []byte, ev *runtime.Event) ([]byte, bool) {
	ok := true
	b = append(b, `{"type":`...)
	b = appendString(b, ev.Type)
	b = append(b, `,"time":`...)
	if b, ok = appendTime(b, ev.Time); !ok {
		return b, false
	}
	b = append(b, `,"runId":`...)
	b = appendString(b, ev.RunID)
	b = optString(b, `,"at":`, ev.At)
	b = optString(b, `,"agent":`, ev.Agent)
	b = optString(b, `,"target":`, ev.Target)
	b = optString(b, `,"model":`, ev.Model)
	b = optString(b, `,"prompt":`, ev.Prompt)
	b = optString(b, `,"answer":`, ev.Answer)
	if len(ev.ToolCalls) > 0 {
		b = append(b, `,"toolCalls":`...)
		b = appendStrings(b, ev.ToolCalls)
	}
	if ev.Step != 0 {
		b = append(b, `,"step":`...)
		b = strconv.AppendInt(b, int64(ev.Step), 10)
	}
	if len(ev.Args) > 0 {
		b = append(b, `,"args":`...)
		if b, ok = appendRaw(b, ev.Args); !ok {
			return b, false
		}
	}
	if ev.Output != nil {
		b = append(b, `,"output":`...)
		if b, ok = e.value(b, ev.Output); !ok {
			return b, false
		}
	}
	if ev.Usage != nil {
		b = append(b, `,"usage":`...)
		b = jsonUsage(b, ev.Usage)
	}
	if ev.Cost != 0 {
		b = append(b, `,"cost":`...)
		if b, ok = appendFloat(b, ev.Cost, 64); !ok {
			return b, false
		}
	}
	if ev.DurationMs != 0 {
		b = append(b, `,"durationMs":`...)
		b = strconv.AppendInt(b, ev.DurationMs, 10)
	}
	if ev.Mocked {
		b = append(b, `,"mocked":true`...)
	}
	if ev.Attempt != 0 {
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(ev.Attempt), 10)
	}
	b = optString(b, `,"decision":`, ev.Decision)
	b = optString(b, `,"detail":`, ev.Detail)
	b = optString(b, `,"policy":`, ev.Policy)
	b = optString(b, `,"rule":`, ev.Rule)
	b = optString(b, `,"phase":`, ev.Phase)
	b = optString(b, `,"message":`, ev.Message)
	b = optString(b, `,"channel":`, ev.Channel)
	if ev.Item != nil {
		b = append(b, `,"item":`...)
		b = strconv.AppendInt(b, int64(*ev.Item), 10)
	}
	b = optString(b, `,"arm":`, ev.Arm)
	b = optString(b, `,"status":`, string(ev.Status))
	if ev.Error != nil {
		b = append(b, `,"error":`...)
		if b, ok = jsonErrorInfo(b, ev.Error); !ok {
			return b, false
		}
	}
	if ev.Progress != nil {
		b = append(b, `,"progress":`...)
		if b, ok = jsonProgress(b, ev.Progress); !ok {
			return b, false
		}
	}
	b = optString(b, `,"system":`, ev.System)
	b = optString(b, `,"result":`, ev.Result)
	if ev.Unpriced {
		b = append(b, `,"unpriced":true`...)
	}
	b = optString(b, `,"setBy":`, ev.SetBy)
	return append(b, '}'), true
}

func (e encoder) recording(b []byte, r *runtime.Recording) ([]byte, bool) {
	ok := true
	b = append(b, `{"calls":`...)
	if r.Calls == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Calls {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = e.recorded(b, &r.Calls[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	if len(r.Methods) > 0 {
		b = append(b, `,"methods":`...)
		var arr [8]string
		keys := jsonappend.SortedKeys(arr[:0], r.Methods)
		for i, k := range keys {
			if i == 0 {
				b = append(b, '{')
			} else {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			ms := r.Methods[k]
			if ms == nil {
				b = append(b, "null"...)
				continue
			}
			b = append(b, '[')
			for j := range ms {
				if j > 0 {
					b = append(b, ',')
				}
				if b, ok = jsonMethod(b, &ms[j]); !ok {
					return b, false
				}
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}

func jsonMethod(b []byte, m *tool.Method) ([]byte, bool) {
	ok := true
	b = append(b, `{"name":`...)
	b = appendString(b, m.Name)
	b = append(b, `,"description":`...)
	b = appendString(b, m.Description)
	if len(m.Params) > 0 {
		b = append(b, `,"params":`...)
		if b, ok = appendRaw(b, m.Params); !ok {
			return b, false
		}
	}
	b = append(b, `,"effect":`...)
	b = appendString(b, string(m.Effect))
	if m.PipelineOnly {
		b = append(b, `,"pipelineOnly":true`...)
	}
	return append(b, '}'), true
}

func (e encoder) recorded(b []byte, c *runtime.Recorded) ([]byte, bool) {
	ok := true
	b = append(b, `{"kind":`...)
	b = appendString(b, c.Kind)
	b = append(b, `,"target":`...)
	b = appendString(b, c.Target)
	b = optString(b, `,"at":`, c.At)
	b = optString(b, `,"lane":`, c.Lane)
	if c.Step != 0 {
		b = append(b, `,"step":`...)
		b = strconv.AppendInt(b, int64(c.Step), 10)
	}
	if len(c.Args) > 0 {
		b = append(b, `,"args":`...)
		if b, ok = appendRaw(b, c.Args); !ok {
			return b, false
		}
	}
	if c.Response != nil {
		b = append(b, `,"response":`...)
		if b, ok = jsonResponse(b, c.Response); !ok {
			return b, false
		}
	}
	if c.Value != nil {
		b = append(b, `,"value":`...)
		if b, ok = e.value(b, c.Value); !ok {
			return b, false
		}
	}
	if len(c.Result) > 0 {
		b = append(b, `,"result":`...)
		if b, ok = appendRaw(b, c.Result); !ok {
			return b, false
		}
	}
	if c.Mocked {
		b = append(b, `,"mocked":true`...)
	}
	if c.Answer != nil {
		b = append(b, `,"answer":`...)
		if b, ok = e.value(b, c.Answer); !ok {
			return b, false
		}
	}
	if c.Error != nil {
		b = append(b, `,"error":`...)
		if b, ok = jsonRecordedError(b, c.Error); !ok {
			return b, false
		}
	}
	b = optString(b, `,"setBy":`, c.SetBy)
	return append(b, '}'), true
}

func jsonRecordedError(b []byte, x *runtime.RecordedError) ([]byte, bool) {
	ok := true
	b = append(b, '{')
	if x.Code != "" {
		b = append(b, `"code":`...)
		b = appendString(b, x.Code)
		b = append(b, ',')
	}
	b = append(b, `"message":`...)
	b = appendString(b, x.Message)
	if x.Retryable {
		b = append(b, `,"retryable":true`...)
	}
	if len(x.Detail) > 0 {
		b = append(b, `,"detail":`...)
		if b, ok = appendRaw(b, x.Detail); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

func jsonResponse(b []byte, r *model.Response) ([]byte, bool) {
	ok := true
	b = append(b, `{"text":`...)
	b = appendString(b, r.Text)
	if len(r.ToolCalls) > 0 {
		b = append(b, `,"toolCalls":`...)
		if b, ok = jsonToolCalls(b, r.ToolCalls); !ok {
			return b, false
		}
	}
	b = append(b, `,"message":`...)
	if b, ok = jsonMessage(b, &r.Message); !ok {
		return b, false
	}
	b = append(b, `,"usage":`...)
	b = jsonUsage(b, &r.Usage)
	b = append(b, `,"cost":`...)
	if b, ok = appendFloat(b, r.Cost, 64); !ok {
		return b, false
	}
	b = append(b, `,"stopReason":`...)
	b = appendString(b, string(r.StopReason))
	b = optString(b, `,"nativeStop":`, r.NativeStop)
	b = optString(b, `,"model":`, r.Model)
	b = append(b, `,"attempts":`...)
	b = strconv.AppendInt(b, int64(r.Attempts), 10)
	if r.Unpriced {
		b = append(b, `,"unpriced":true`...)
	}
	// Raw is not written (json:"-").
	return append(b, '}'), true
}

func jsonToolCalls(b []byte, tcs []model.ToolCall) ([]byte, bool) {
	ok := true
	b = append(b, '[')
	for i := range tcs {
		tc := &tcs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendString(b, tc.ID)
		b = append(b, `,"name":`...)
		b = appendString(b, tc.Name)
		b = append(b, `,"args":`...)
		if b, ok = appendRaw(b, tc.Args); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	return append(b, ']'), true
}

func jsonMessage(b []byte, m *model.Message) ([]byte, bool) {
	ok := true
	b = append(b, `{"role":`...)
	b = appendString(b, string(m.Role))
	b = optString(b, `,"text":`, m.Text)
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"toolCalls":`...)
		if b, ok = jsonToolCalls(b, m.ToolCalls); !ok {
			return b, false
		}
	}
	if len(m.ToolResults) > 0 {
		b = append(b, `,"toolResults":[`...)
		for i := range m.ToolResults {
			tr := &m.ToolResults[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"callId":`...)
			b = appendString(b, tr.CallID)
			b = append(b, `,"name":`...)
			b = appendString(b, tr.Name)
			b = append(b, `,"content":`...)
			b = appendString(b, tr.Content)
			if tr.IsError {
				b = append(b, `,"isError":true`...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if m.Native != nil {
		b = append(b, `,"native":{"provider":`...)
		b = appendString(b, m.Native.Provider)
		b = append(b, `,"data":`...)
		if b, ok = appendRaw(b, m.Native.Data); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// The values a record holds (inputs, outputs, context.data, answers) and its strings, numbers
// and times are written by jsonappend.
func (encoder) value(b []byte, v any) ([]byte, bool)             { return jsonappend.Value(b, v) }
func (encoder) object(b []byte, m map[string]any) ([]byte, bool) { return jsonappend.Object(b, m) }
func appendString(b []byte, s string) []byte                     { return jsonappend.String(b, s) }
func appendFloat(b []byte, f float64, bits int) ([]byte, bool)   { return jsonappend.Float(b, f, bits) }
func appendTime(b []byte, t time.Time) ([]byte, bool)            { return jsonappend.Time(b, t) }
func appendRaw(b []byte, raw json.RawMessage) ([]byte, bool)     { return jsonappend.Raw(b, raw) }
func appendStrings(b []byte, ss []string) []byte                 { return jsonappend.Strings(b, ss) }
func appendIntMap(b []byte, m map[string]int) []byte             { return jsonappend.IntMap(b, m) }
func jsonMarshal(b []byte, v any) ([]byte, bool) {
	m, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, m...), true
}
