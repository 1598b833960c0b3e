package agent

import (
	"encoding/json"

	"halolang.dev/halo/host/model"
)

// State's JSON form keeps the model's own bytes: a tool call's arguments and a provider's
// native message are JSON held in json.RawMessage, which encoding/json compacts and
// HTML-escapes when it writes them (and re-indents under MarshalIndent). A conversation
// saved that way would send back arguments other than the ones the model wrote (OpenAI
// carries them as text). So they are saved as JSON strings of their exact bytes, which
// every encoder keeps.

type savedState struct {
	Messages    []savedMessage     `json:"messages"`
	Requests    int                `json:"requests"`
	Steps       int                `json:"steps"`
	Corrections int                `json:"corrections"`
	Pending     []savedCall        `json:"pending,omitempty"`
	Results     []model.ToolResult `json:"results,omitempty"`
}

type savedMessage struct {
	Role        model.Role         `json:"role"`
	Text        string             `json:"text,omitempty"`
	ToolCalls   []savedCall        `json:"toolCalls,omitempty"`
	ToolResults []model.ToolResult `json:"toolResults,omitempty"`
	Native      *savedNative       `json:"native,omitempty"`
}

type savedCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Args are the arguments' exact bytes.
	Args string `json:"args"`
}

type savedNative struct {
	Provider string `json:"provider"`
	// Data is the native message's exact bytes.
	Data string `json:"data"`
}

// MarshalJSON writes the State with the model's bytes kept exactly (see savedState).
func (s State) MarshalJSON() ([]byte, error) {
	out := savedState{Requests: s.Requests, Steps: s.Steps, Corrections: s.Corrections, Results: s.Results,
		Messages: make([]savedMessage, len(s.Messages)), Pending: saveCalls(s.Pending)}
	for i, m := range s.Messages {
		sm := savedMessage{Role: m.Role, Text: m.Text, ToolCalls: saveCalls(m.ToolCalls), ToolResults: m.ToolResults}
		if m.Native != nil {
			sm.Native = &savedNative{Provider: m.Native.Provider, Data: string(m.Native.Data)}
		}
		out.Messages[i] = sm
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (s *State) UnmarshalJSON(b []byte) error {
	var in savedState
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*s = State{Requests: in.Requests, Steps: in.Steps, Corrections: in.Corrections, Results: in.Results,
		Messages: make([]model.Message, len(in.Messages)), Pending: loadCalls(in.Pending)}
	for i, sm := range in.Messages {
		m := model.Message{Role: sm.Role, Text: sm.Text, ToolCalls: loadCalls(sm.ToolCalls), ToolResults: sm.ToolResults}
		if sm.Native != nil {
			m.Native = &model.Native{Provider: sm.Native.Provider, Data: json.RawMessage(sm.Native.Data)}
		}
		s.Messages[i] = m
	}
	return nil
}

func saveCalls(cs []model.ToolCall) []savedCall {
	if cs == nil {
		return nil
	}
	out := make([]savedCall, len(cs))
	for i, c := range cs {
		out[i] = savedCall{ID: c.ID, Name: c.Name, Args: string(c.Args)}
	}
	return out
}

func loadCalls(cs []savedCall) []model.ToolCall {
	if cs == nil {
		return nil
	}
	out := make([]model.ToolCall, len(cs))
	for i, c := range cs {
		out[i] = model.ToolCall{ID: c.ID, Name: c.Name, Args: json.RawMessage(c.Args)}
	}
	return out
}
