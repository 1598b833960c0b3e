// Package model owns the host's conversations with model providers: one Provider interface
// that sends a Request (system prompt, messages, tool definitions, sampling limits) and returns
// a Response (text, tool calls, token usage, cost), with adapters that speak each vendor's
// native wire format — OpenAI, OpenRouter and Together (go-openai), Anthropic Messages, Google
// Gemini generateContent, Ollama /api/chat and Replicate predictions.
//
// The package also owns what every adapter shares: model references ("openai/gpt-4o-mini"),
// API keys and base URLs read from the environment map the CLI hands down, the per-model price
// table, coded errors, and retries with exponential backoff that honour Retry-After.
//
// The runtime and the agent loop use it; it knows nothing of pipelines, policies or how tools
// are implemented: a tool is plain data here (a name, a description, a JSON Schema).
package model

import (
	"context"
	"encoding/json"
	"time"
)

// A Role says who wrote a message.
type Role string

const (
	// User messages carry the prompt (and, in a tool conversation, nothing else).
	User Role = "user"
	// Assistant messages are the model's earlier answers, tool calls included.
	Assistant Role = "assistant"
	// Tool messages carry the results of the tool calls of the assistant message before them.
	Tool Role = "tool"
)

// A ToolDef is a function the model may ask for.
type ToolDef struct {
	// Name is the function name the model sees, e.g. "Code__edit".
	Name string `json:"name"`
	// Description tells the model when to call it.
	Description string `json:"description,omitempty"`
	// Params is the JSON Schema of the arguments object; nil means an object with any fields.
	Params json.RawMessage `json:"params,omitempty"`
}

// A ToolChoice says whether the model may call the offered tools.
type ToolChoice string

const (
	// ToolAuto lets the model decide (the default when the request has tools).
	ToolAuto ToolChoice = "auto"
	// ToolNone asks for an answer without tool calls; the definitions are still sent so the
	// model can read the earlier calls in the conversation. Ollama has no way to say this:
	// a caller must ignore tool calls it did not want.
	ToolNone ToolChoice = "none"
)

// A ToolCall is the model asking for one tool call.
type ToolCall struct {
	// ID identifies the call; the matching ToolResult carries it back. Providers that have no
	// call ids (Gemini, Ollama) get one made up by the adapter.
	ID string `json:"id"`
	// Name is the ToolDef name.
	Name string `json:"name"`
	// Args is the arguments object as JSON ("{}" when the model gave none).
	Args json.RawMessage `json:"args"`
}

// A ToolResult answers one ToolCall.
type ToolResult struct {
	// CallID is the ToolCall's ID.
	CallID string `json:"callId"`
	// Name is the ToolCall's Name (Gemini and Ollama match results by name).
	Name string `json:"name"`
	// Content is what the model reads: text, or JSON as text.
	Content string `json:"content"`
	// IsError marks a failed call, for providers that can say so (Anthropic).
	IsError bool `json:"isError,omitempty"`
}

// A Message is one turn of the conversation.
type Message struct {
	Role Role `json:"role"`
	// Text is the message's text; for an assistant message with tool calls it may be empty.
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls an assistant message asked for.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolResults are the answers a Tool message carries, one per call.
	ToolResults []ToolResult `json:"toolResults,omitempty"`
	// Native is the assistant message exactly as its provider returned it (Gemini parts with
	// thought signatures, Anthropic thinking blocks). When it is set and its Provider is the
	// adapter's own, the adapter sends it back unchanged instead of rebuilding the message from
	// Text and ToolCalls; other adapters ignore it. Callers copy it from Response.Message and
	// never build it; a caller that changes Text or ToolCalls must set Native to nil, or the
	// change is not what the provider sees.
	Native *Native `json:"native,omitempty"`
}

// Native is a provider's own encoding of an assistant message.
type Native struct {
	// Provider is the adapter's name ("gemini", "anthropic", ...).
	Provider string `json:"provider"`
	// Data is the message in the provider's wire form.
	Data json.RawMessage `json:"data"`
}

// A Request is one model call.
type Request struct {
	// Model is the provider's model id, without the provider prefix ("gpt-4o-mini").
	Model string
	// System is the system prompt; each adapter puts it where its API wants it.
	System string
	// Messages is the conversation so far, oldest first; the last one is usually User or Tool.
	Messages []Message
	// Tools are the functions offered; none means a plain completion.
	Tools []ToolDef
	// ToolChoice applies when Tools is not empty; "" means ToolAuto.
	ToolChoice ToolChoice
	// Temperature is sent when not nil.
	Temperature *float64
	// MaxTokens caps the reply's output tokens; it is sent whenever it is above zero. Anthropic
	// requires a cap, so its adapter sends DefaultAnthropicMaxTokens when this is zero.
	MaxTokens int
	// Timeout bounds each attempt (not the retries together); zero means Config.Timeout.
	Timeout time.Duration
	// Wire, when set, keeps the conversation's wire bytes between its requests, so each
	// message is encoded once (see Wire). The tool loop keeps one per conversation.
	Wire *Wire
}

// Usage is what the provider reported the call used.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

// A StopReason says why the model stopped, in the same words for every provider.
type StopReason string

const (
	// StopEnd: the model finished its answer.
	StopEnd StopReason = "end"
	// StopToolCalls: the model asked for tool calls and waits for their results.
	StopToolCalls StopReason = "tool_calls"
	// StopMaxTokens: the reply hit MaxTokens and is cut.
	StopMaxTokens StopReason = "max_tokens"
	// StopFiltered: the provider withheld or cut the reply (safety, content filter).
	StopFiltered StopReason = "filtered"
	// StopOther: anything else; Response.NativeStop has the provider's word.
	StopOther StopReason = "other"
)

// A Response is the model's answer to a Request.
type Response struct {
	// Text is the answer's text (all text parts joined).
	Text string `json:"text"`
	// ToolCalls are the calls the model asked for, in order.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// Message is the answer as an Assistant message, ready to append to Request.Messages for
	// the next turn (it carries Native when the provider needs its own form echoed back).
	Message Message `json:"message"`
	// Usage is the provider's token count.
	Usage Usage `json:"usage"`
	// Cost is in US dollars, from the price table; 0 for a model the table doesn't know.
	Cost float64 `json:"cost"`
	// StopReason is why the model stopped; NativeStop is the provider's own word for it.
	StopReason StopReason `json:"stopReason"`
	NativeStop string     `json:"nativeStop,omitempty"`
	// Model is the model id the provider says answered (it may name a dated version).
	Model string `json:"model,omitempty"`
	// Attempts is how many HTTP requests the call took (1 without retries).
	Attempts int `json:"attempts"`
	// Unpriced says the price table has no entry for the model: Cost is 0, and what the
	// call cost is unknown.
	Unpriced bool `json:"unpriced,omitempty"`
	// Raw is the provider's response body as received (for recordings and debugging).
	Raw json.RawMessage `json:"-"`
}

// A Provider sends requests to one model service.
//
// Complete makes the call, retrying failures that may pass (429, 408, 5xx, network errors)
// with exponential backoff up to Config.MaxAttempts, and returns an *Error for every failure.
// It is safe for concurrent use.
type Provider interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// ProviderFunc adapts a function to the Provider interface (mocks, tests).
type ProviderFunc func(ctx context.Context, req Request) (Response, error)

// Complete calls f.
func (f ProviderFunc) Complete(ctx context.Context, req Request) (Response, error) {
	return f(ctx, req)
}
