package runtime

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	"halolang.dev/halo/host/agent"
)

// CodeTampered: a paused run's record does not verify against its seal: something in it
// changed since the run paused (or it was not written by halo), and it is not resumed.
const CodeTampered = "RUN_TAMPERED"

// A Seal is a paused record's seal: a MAC, with the store's key (RunStore.SealKey), of each
// part of the record a resume acts on, so a resume can refuse a record that was changed
// since the run paused and say which part changed. Editing a record could otherwise swap
// the call a person approves, or the calls its approval lets run.
type Seal struct {
	// Parts holds the MAC of each part, by name (sealParts), base64.
	Parts map[string]string `json:"parts"`
}

// A sealPart is one part of a paused record that its seal covers.
type sealPart struct {
	name, what string
	value      func(rec *Record) any
}

// sealParts are the parts of a paused record a resume acts on, each sealed on its own.
var sealParts = []sealPart{
	{"run", "where the run waits (its pipeline, stage, loop passes and question)", func(rec *Record) any {
		r := rec.Resume
		if r == nil {
			r = &ResumePoint{}
		}
		return struct {
			RunID, File, Pipeline string
			Status                Status
			Paused                *PauseInfo
			Stage                 int
			Loops                 map[int]int
			Mocks                 map[string]int
		}{rec.RunID, rec.File, rec.Pipeline, rec.Status, rec.Meta.Paused, r.Stage, r.Loops, rec.Mocks}
	}},
	{"values", "the run's inputs and values (its inputs, context.data and the stages' values)", func(rec *Record) any {
		var in, out map[int]any
		if rec.Resume != nil {
			in, out = rec.Resume.Inputs, rec.Resume.Outputs
		}
		return struct {
			Inputs, Data    map[string]any
			Stages, Outputs map[int]any
		}{rec.Inputs, rec.Data, in, out}
	}},
	{"call", "the call waiting for approval", func(rec *Record) any {
		if rec.Resume == nil || rec.Resume.Agent == nil {
			return nil
		}
		a := rec.Resume.Agent
		return struct {
			Target string
			Start  bool
			Call   WaitingCall
		}{a.Target, a.Start, a.Call}
	}},
	{"turn", "the calls of the agent's turn still to run", func(rec *Record) any {
		if rec.Resume == nil || rec.Resume.Agent == nil || rec.Resume.Agent.Conversation == nil {
			return nil
		}
		c := rec.Resume.Agent.Conversation
		return struct {
			Pending any
			Results any
		}{c.Pending, c.Results}
	}},
	{"conversation", "the agent's conversation so far", func(rec *Record) any {
		if rec.Resume == nil || rec.Resume.Agent == nil {
			return nil
		}
		a := rec.Resume.Agent
		var st agent.State
		if a.Conversation != nil {
			st = *a.Conversation
			st.Pending, st.Results = nil, nil
		}
		return struct {
			System string
			State  agent.State
		}{a.System, st}
	}},
}

// sealOf returns the MAC of part p of rec with key. The part is encoded, decoded and
// encoded again, empty lists and objects as null, so that it is written as a record loaded
// from its JSON writes it (a number an int before and a float64 after, an empty map left
// out by omitempty and nil once loaded).
func sealOf(p sealPart, rec *Record, key []byte) string {
	b, err := json.Marshal(p.value(rec))
	if err == nil {
		var v any
		if json.Unmarshal(b, &v) == nil {
			if b2, err := json.Marshal(emptyAsNull(v)); err == nil {
				b = b2
			}
		}
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(p.name))
	m.Write([]byte{0})
	m.Write(b)
	return base64.RawStdEncoding.EncodeToString(m.Sum(nil))
}

// emptyAsNull returns v with every empty list and object, at any depth, made null.
func emptyAsNull(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
		for k, e := range x {
			x[k] = emptyAsNull(e)
		}
	case []any:
		if len(x) == 0 {
			return nil
		}
		for i, e := range x {
			x[i] = emptyAsNull(e)
		}
	}
	return v
}

// SealRecord seals rec, a paused run's record, with key.
func SealRecord(rec *Record, key []byte) {
	s := &Seal{Parts: make(map[string]string, len(sealParts))}
	for _, p := range sealParts {
		s.Parts[p.name] = sealOf(p, rec, key)
	}
	rec.Seal = s
}

// CheckSeal returns nil when rec, a paused run's record, verifies against its seal with
// key, and a CodeTampered error saying which parts changed when it does not.
func CheckSeal(rec *Record, key []byte) error {
	if rec.Seal == nil || len(rec.Seal.Parts) == 0 {
		return errorf(CodeTampered, "run %s: its record has no seal, so nothing says it is as the run left it when it paused (it was written by another program, or imported from a file halo did not write): it is not resumed", rec.RunID)
	}
	var changed []string
	for _, p := range sealParts {
		want, err := base64.RawStdEncoding.DecodeString(rec.Seal.Parts[p.name])
		got, _ := base64.RawStdEncoding.DecodeString(sealOf(p, rec, key))
		if err != nil || !hmac.Equal(want, got) {
			changed = append(changed, p.what)
		}
	}
	if len(changed) > 0 {
		return errorf(CodeTampered, "run %s: its record was changed since the run paused (or sealed with another store's key), in: %s; it is not resumed", rec.RunID, strings.Join(changed, "; "))
	}
	return nil
}
