// Package worldtime is the WorldTime tool provider: time-zone arithmetic with no network
// access (the current time in a zone, a time converted between zones, the difference between
// two times, the zones whose names match a string). It is built only against the Halo SDK and
// is the model a third-party author copies; cmd/worldtime is its plugin executable, which the
// `world-time` tool package ships.
package worldtime

import (
	_ "embed"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	_ "time/tzdata" // the zone database travels with the plugin: no system files needed

	"halolang.dev/halo/sdk"
)

//go:embed zones.txt
var zoneList string

// New returns the provider. now is its clock: time.Now in the plugin, a fixed time in tests.
func New(now func() time.Time) sdk.Provider {
	w := &worldTime{now: now, zones: strings.Fields(zoneList)}
	return sdk.Provider{
		Name:        "WorldTime",
		Description: "Time zone arithmetic (runs locally, no network)",
		Methods: []sdk.Method{
			sdk.NewMethod("now", "The current date and time in a time zone (an IANA name such as Europe/Paris; UTC when omitted).", sdk.Read, w.nowIn),
			sdk.NewMethod("convert", "Converts a date and time from one time zone to another. The time is RFC 3339 (2026-03-01T09:30:00+01:00) or local to `from` (2026-03-01 09:30, or 09:30 for today).", sdk.Read, w.convert),
			sdk.NewMethod("difference", "The time between two dates and times, in seconds, hours and days and as text; negative when end is before start.", sdk.Read, w.difference),
			sdk.NewMethod("zones", "Lists the IANA time zone names that contain a string (case-insensitive; spaces match underscores), to find the name to pass to the other methods.", sdk.Read, w.search),
		},
	}
}

type worldTime struct {
	now   func() time.Time
	zones []string
}

// A Moment is a time as the model reads it.
type Moment struct {
	Zone         string `json:"zone"`
	Time         string `json:"time"`
	Local        string `json:"local"`
	Weekday      string `json:"weekday"`
	Offset       string `json:"offset"`
	Abbreviation string `json:"abbreviation"`
	DST          bool   `json:"dst"`
}

func moment(t time.Time) Moment {
	name, _ := t.Zone()
	return Moment{
		Zone:         t.Location().String(),
		Time:         t.Format(time.RFC3339),
		Local:        t.Format("2006-01-02 15:04:05"),
		Weekday:      t.Weekday().String(),
		Offset:       t.Format("-07:00"),
		Abbreviation: name,
		DST:          t.IsDST(),
	}
}

type nowParams struct {
	Zone string `json:"zone,omitempty" jsonschema:"description=IANA time zone name such as America/New_York; UTC when omitted"`
}

func (w *worldTime) nowIn(_ *sdk.Call, p nowParams) (Moment, error) {
	loc, err := w.location(p.Zone)
	if err != nil {
		return Moment{}, err
	}
	return moment(w.now().In(loc)), nil
}

type convertParams struct {
	Time string `json:"time" jsonschema:"description=RFC 3339 time or a local time in the from zone: 2026-03-01 09:30 or 09:30 (today)"`
	From string `json:"from,omitempty" jsonschema:"description=Zone of a local time; UTC when omitted. Ignored when the time carries an offset"`
	To   string `json:"to" jsonschema:"description=Zone to convert to"`
}

type converted struct {
	From Moment `json:"from"`
	To   Moment `json:"to"`
}

func (w *worldTime) convert(_ *sdk.Call, p convertParams) (converted, error) {
	from, err := w.location(p.From)
	if err != nil {
		return converted{}, err
	}
	to, err := w.location(p.To)
	if err != nil {
		return converted{}, err
	}
	t, err := w.parse(p.Time, from)
	if err != nil {
		return converted{}, err
	}
	return converted{From: moment(t), To: moment(t.In(to))}, nil
}

type differenceParams struct {
	Start string `json:"start" jsonschema:"description=RFC 3339 time or a local time in zone"`
	End   string `json:"end" jsonschema:"description=RFC 3339 time or a local time in zone"`
	Zone  string `json:"zone,omitempty" jsonschema:"description=Zone of local times; UTC when omitted"`
}

type difference struct {
	Seconds float64 `json:"seconds"`
	Hours   float64 `json:"hours"`
	Days    float64 `json:"days"`
	Text    string  `json:"text"`
}

func (w *worldTime) difference(_ *sdk.Call, p differenceParams) (difference, error) {
	loc, err := w.location(p.Zone)
	if err != nil {
		return difference{}, err
	}
	start, err := w.parse(p.Start, loc)
	if err != nil {
		return difference{}, err
	}
	end, err := w.parse(p.End, loc)
	if err != nil {
		return difference{}, err
	}
	d := end.Sub(start)
	return difference{
		Seconds: d.Seconds(),
		Hours:   math.Round(d.Hours()*100) / 100,
		Days:    math.Round(d.Hours()/24*100) / 100,
		Text:    human(d),
	}, nil
}

// human writes a duration as days, hours and minutes: "2 days 3 hours 5 minutes".
func human(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "minus ", -d
	}
	d = d.Round(time.Minute)
	days, hours, minutes := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	var parts []string
	for _, u := range []struct {
		n    int
		unit string
	}{{days, "day"}, {hours, "hour"}, {minutes, "minute"}} {
		if u.n == 1 {
			parts = append(parts, "1 "+u.unit)
		} else if u.n > 1 {
			parts = append(parts, fmt.Sprintf("%d %ss", u.n, u.unit))
		}
	}
	if len(parts) == 0 {
		return "0 minutes"
	}
	return sign + strings.Join(parts, " ")
}

type zonesParams struct {
	Query string `json:"query" jsonschema:"description=Part of a zone name: a city, a region or an abbreviation such as paris or america/"`
	Limit int    `json:"limit,omitempty" jsonschema:"description=At most this many names (default 20),minimum=1,maximum=600"`
}

type zoneMatches struct {
	Zones []string `json:"zones"`
	Total int      `json:"total"`
}

func (w *worldTime) search(_ *sdk.Call, p zonesParams) (zoneMatches, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 20
	}
	all := w.matching(p.Query)
	out := zoneMatches{Zones: all, Total: len(all)}
	if len(all) > limit {
		out.Zones = all[:limit]
	}
	if out.Zones == nil {
		out.Zones = []string{}
	}
	return out, nil
}

func (w *worldTime) matching(query string) []string {
	q := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(query), " ", "_"))
	var out []string
	for _, z := range w.zones {
		if strings.Contains(strings.ToLower(z), q) {
			out = append(out, z)
		}
	}
	sort.Strings(out)
	return out
}

// location loads a zone, answering an unknown name with a failure the model can act on: the
// names that look like what it meant.
func (w *worldTime) location(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	if name == "" || strings.EqualFold(name, "UTC") {
		return time.UTC, nil
	}
	if strings.EqualFold(name, "local") {
		return nil, sdk.Fail("the plugin has no local zone; pass an IANA name such as Europe/Paris")
	}
	loc, err := time.LoadLocation(name)
	if err == nil {
		return loc, nil
	}
	last := name
	if i := strings.LastIndexAny(last, "/"); i >= 0 {
		last = last[i+1:]
	}
	suggestions := w.matching(last)
	if len(suggestions) > 5 {
		suggestions = suggestions[:5]
	}
	msg := fmt.Sprintf("unknown time zone %q; call zones to search for the right name", name)
	return nil, sdk.FailWith(msg, map[string]any{"error": msg, "suggestions": append([]string{}, suggestions...)})
}

var localLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}

// parse reads an RFC 3339 time, or a local time in loc; a bare clock time means today in loc.
func (w *worldTime) parse(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range localLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"15:04:05", "15:04"} {
		if c, err := time.Parse(layout, s); err == nil {
			today := w.now().In(loc)
			return time.Date(today.Year(), today.Month(), today.Day(), c.Hour(), c.Minute(), c.Second(), 0, loc), nil
		}
	}
	return time.Time{}, sdk.Fail("cannot read the time %q; write 2026-03-01T09:30:00+01:00, 2026-03-01 09:30 or 09:30", s)
}
