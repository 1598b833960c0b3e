package worldtime_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/plugins/worldtime"
	"halolang.dev/halo/sdk"
	"halolang.dev/halo/sdk/sdktest"
)

// fixed is the clock of every test: a Sunday in northern winter.
var fixed = time.Date(2026, 1, 18, 12, 0, 0, 0, time.UTC)

func start(t *testing.T) *sdktest.Tool {
	return sdktest.Start(t, worldtime.New(func() time.Time { return fixed })).Tool("WorldTime", nil)
}

func TestDescribe(t *testing.T) {
	c := sdktest.Start(t, worldtime.New(time.Now))
	ps := c.Describe()
	if len(ps) != 1 || ps[0].Name != "WorldTime" {
		t.Fatalf("providers = %+v", ps)
	}
	var names []string
	for _, m := range ps[0].Methods {
		names = append(names, m.Name)
		if m.Effect != sdk.Read {
			t.Errorf("%s has effect %s; every WorldTime method only reads", m.Name, m.Effect)
		}
		if !json.Valid(m.Schema) {
			t.Errorf("%s: schema is not JSON: %s", m.Name, m.Schema)
		}
	}
	if got := strings.Join(names, ","); got != "now,convert,difference,zones" {
		t.Errorf("methods = %s", got)
	}
}

func TestSchemaFromStruct(t *testing.T) {
	var convert sdktest.MethodInfo
	for _, m := range start(t).Methods() {
		if m.Name == "convert" {
			convert = m
		}
	}
	var s struct {
		Type                 string                    `json:"type"`
		Required             []string                  `json:"required"`
		Properties           map[string]map[string]any `json:"properties"`
		AdditionalProperties *bool                     `json:"additionalProperties"`
	}
	if err := json.Unmarshal(convert.Schema, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || strings.Join(s.Required, ",") != "time,to" {
		t.Errorf("schema = %s", convert.Schema)
	}
	if s.Properties["from"]["description"] == nil {
		t.Errorf("the jsonschema tag's description is missing: %s", convert.Schema)
	}
}

func TestMethods(t *testing.T) {
	clock := start(t)
	tests := []struct {
		name   string
		method string
		args   map[string]any
		want   map[string]any // fields of the result that must match
	}{
		{"now in Tokyo", "now", map[string]any{"zone": "Asia/Tokyo"},
			map[string]any{"time": "2026-01-18T21:00:00+09:00", "offset": "+09:00", "weekday": "Sunday", "abbreviation": "JST"}},
		{"now defaults to UTC", "now", nil,
			map[string]any{"zone": "UTC", "time": "2026-01-18T12:00:00Z"}},
		{"summer time", "convert", map[string]any{"time": "2026-07-01 09:30", "from": "Europe/Paris", "to": "America/New_York"},
			map[string]any{"to": map[string]any{"zone": "America/New_York", "time": "2026-07-01T03:30:00-04:00", "local": "2026-07-01 03:30:00", "weekday": "Wednesday", "offset": "-04:00", "abbreviation": "EDT", "dst": true}}},
		{"RFC 3339 ignores from", "convert", map[string]any{"time": "2026-03-01T09:30:00+01:00", "from": "Asia/Tokyo", "to": "UTC"},
			map[string]any{"to": map[string]any{"zone": "UTC", "time": "2026-03-01T08:30:00Z", "local": "2026-03-01 08:30:00", "weekday": "Sunday", "offset": "+00:00", "abbreviation": "UTC", "dst": false}}},
		{"clock time is today", "convert", map[string]any{"time": "09:00", "from": "Asia/Kolkata", "to": "UTC"},
			map[string]any{"to": map[string]any{"zone": "UTC", "time": "2026-01-18T03:30:00Z", "local": "2026-01-18 03:30:00", "weekday": "Sunday", "offset": "+00:00", "abbreviation": "UTC", "dst": false}}},
		{"difference across DST", "difference", map[string]any{"start": "2026-03-28 12:00", "end": "2026-03-29 12:00", "zone": "Europe/London"},
			map[string]any{"seconds": 82800.0, "hours": 23.0, "text": "23 hours"}},
		{"negative difference", "difference", map[string]any{"start": "2026-01-02T00:00:00Z", "end": "2026-01-01T00:00:00Z"},
			map[string]any{"days": -1.0, "text": "minus 1 day"}},
		{"zones search", "zones", map[string]any{"query": "new york"},
			map[string]any{"zones": []any{"America/New_York"}, "total": 1.0}},
		{"zones limit", "zones", map[string]any{"query": "america/", "limit": 2},
			map[string]any{"zones": []any{"America/Adak", "America/Anchorage"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := clock.Call(tt.method, tt.args)
			var got map[string]any
			if err := out.Decode(&got); err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.want {
				g, _ := json.Marshal(got[k])
				w, _ := json.Marshal(want)
				if string(g) != string(w) {
					t.Errorf("%s = %s, want %s", k, g, w)
				}
			}
		})
	}
}

func TestFailures(t *testing.T) {
	clock := start(t)

	out := clock.Call("now", map[string]any{"zone": "Europe/Pariss"})
	if out.Failure == "" || !strings.Contains(string(out.Detail), `"suggestions"`) {
		t.Fatalf("unknown zone: %s", out)
	}
	var detail struct {
		Error       string   `json:"error"`
		Suggestions []string `json:"suggestions"`
	}
	_ = json.Unmarshal(out.Detail, &detail)
	if !strings.Contains(detail.Error, "call zones") {
		t.Errorf("the failure should tell the model what to do: %q", detail.Error)
	}

	out = clock.Call("convert", map[string]any{"time": "yesterday", "to": "UTC"})
	if !strings.Contains(out.Failure, "cannot read the time") {
		t.Errorf("bad time: %s", out)
	}

	for _, args := range []map[string]any{
		{"time": "09:00"},                      // to is required
		{"time": "09:00", "to": "UTC", "x": 1}, // unknown argument
		{"time": 900, "to": "UTC"},             // wrong type
	} {
		if out := clock.Call("convert", args); out.Code != "TOOL_ARGUMENT" {
			t.Errorf("convert(%v) = %s, want TOOL_ARGUMENT", args, out)
		}
	}
	if out := clock.Call("tomorrow", nil); out.Code != "TOOL_UNKNOWN_METHOD" {
		t.Errorf("unknown method: %s", out)
	}
}

// TestEveryListedZoneLoads keeps zones.txt and the embedded zone database in step.
func TestEveryListedZoneLoads(t *testing.T) {
	out := start(t).Call("zones", map[string]any{"query": "", "limit": 600})
	var got struct {
		Zones []string `json:"zones"`
		Total int      `json:"total"`
	}
	if err := out.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Total < 400 {
		t.Fatalf("only %d zones listed", got.Total)
	}
	for _, z := range got.Zones {
		if _, err := time.LoadLocation(z); err != nil {
			t.Errorf("listed zone %s does not load: %v", z, err)
		}
	}
}

// TestAsChildProcess runs the real executable the package ships, through the handshake.
func TestAsChildProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds the plugin executable")
	}
	clock := sdktest.Exec(t, sdktest.Build(t, "./cmd/worldtime")).Tool("WorldTime", nil)
	out := clock.Call("convert", map[string]any{"time": "2026-01-18T12:00:00Z", "to": "Australia/Sydney"})
	var got struct{ To struct{ Time string } }
	if err := out.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.To.Time != "2026-01-18T23:00:00+11:00" {
		t.Errorf("to = %s", got.To.Time)
	}
}

// TestConvert is docs/plugins.md's testing example (the repository's TestDocsGoSnippets checks
// that the guide shows this code).
func TestConvert(t *testing.T) {
	fixedClock := func() time.Time { return fixed }
	clock := sdktest.Start(t, worldtime.New(fixedClock)).Tool("WorldTime", nil)
	out := clock.Call("convert", map[string]any{"time": "2026-07-01 09:30", "from": "Europe/Paris", "to": "America/New_York"})
	var got struct{ To struct{ Time string } }
	if err := out.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.To.Time != "2026-07-01T03:30:00-04:00" {
		t.Errorf("9:30 in Paris is %s in New York, want 03:30 (both on summer time)", got.To.Time)
	}
}
