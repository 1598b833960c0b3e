package runstore

import (
	"encoding/base64"
	"strings"
	"time"
)

// CodeCursor: a list cursor this store did not make.
const CodeCursor = "BAD_CURSOR"

// A Cursor is where a page of runs ends: the last run's start time and id.
type Cursor struct {
	Started time.Time
	RunID   string
}

// Encode makes the opaque text a Page's Next holds.
func (c Cursor) Encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.Started.UTC().Format(time.RFC3339Nano) + "|" + c.RunID))
}

// DecodeCursor reads a Query's Cursor; "" is the zero Cursor (the first page).
func DecodeCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		ts, id, ok := strings.Cut(string(b), "|")
		if t, terr := time.Parse(time.RFC3339Nano, ts); ok && terr == nil && id != "" {
			return Cursor{Started: t, RunID: id}, nil
		}
	}
	return Cursor{}, Errorf(CodeCursor, "cursor %q is not one this server made: pass a page's next as it is", truncate(s, 60))
}

// Before reports whether a run started at started with id id comes after c in a list
// (newest first): it is older, or as old with a smaller id.
func (c Cursor) Before(started time.Time, id string) bool {
	if c.RunID == "" {
		return true
	}
	if !started.Equal(c.Started) {
		return started.Before(c.Started)
	}
	return id < c.RunID
}

// LimitOf returns q's page size within 1 and MaxLimit.
func LimitOf(q Query) int {
	switch {
	case q.Limit <= 0:
		return 50
	case q.Limit > MaxLimit:
		return MaxLimit
	}
	return q.Limit
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
