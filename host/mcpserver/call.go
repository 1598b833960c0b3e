package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"halolang.dev/halo/host/runtime"
)

// A notifier is a transport that can send notifications while a request runs, in order
// before its response (the stdio transport; the HTTP one answers with JSON only).
type notifier interface {
	notify(method string, params map[string]any) error
}

// A call is one tools/call being served.
type call struct {
	s *Server
	p *pipeline
	// out sends notifications; nil when the transport cannot.
	out notifier
	// token is the client's progress token; nil means no progress notifications.
	token mcp.ProgressToken
	// level is the lowest log level the client wants; "" means no log notifications.
	level mcp.LoggingLevel
	// ask reports whether the client can ask its user (elicitation in form mode).
	ask bool
	// askNow is set when it can be asked while the call runs (a request to the client over
	// a connection that carries them, before protocol 2026-07-28): then OnInterrupt asks.
	askNow bool
	asker  server.SessionWithElicitation
	// declined is how the person last turned a question down during the call ("declined",
	// "cancelled"), so a run that paused for it is not asked again.
	mu       sync.Mutex
	declined string
	// unasked is set when the client failed to ask (its elicitation answered an error): the
	// run waits, and the client is not asked again during the call.
	unasked bool
	done    int
}

type callKey struct{}

func (s *Server) newCall(ctx context.Context, p *pipeline, req mcp.CallToolRequest) *call {
	c := &call{s: s, p: p}
	if req.Params.Meta != nil {
		c.token = req.Params.Meta.ProgressToken
	}
	sess := server.ClientSessionFromContext(ctx)
	c.out, _ = sess.(notifier)
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		// Protocol 2026-07-28: everything is declared per request, and a question is a
		// result the client answers by calling again (handled for any transport).
		c.level = info.LogLevel
		c.ask = formElicitation(info.ClientCapabilities)
	} else if c.out != nil {
		// Earlier versions: the session holds what initialize and logging/setLevel said, and
		// only a transport that can send the client a request may ask.
		if lg, ok := sess.(server.SessionWithLogging); ok {
			c.level = lg.GetLogLevel()
		}
		if ci, ok := sess.(server.SessionWithClientInfo); ok {
			caps := ci.GetClientCapabilities()
			c.ask = formElicitation(&caps)
		}
		c.asker, _ = sess.(server.SessionWithElicitation)
		c.askNow = c.ask && c.asker != nil
	}
	if c.out == nil {
		c.token, c.level = nil, ""
	}
	return c
}

// formElicitation reports whether caps declare elicitation in form mode (an empty
// elicitation capability means form mode).
func formElicitation(caps *mcp.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	return caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
}

// canAsk reports whether a run paused waiting for what can be put to the client's user:
// a |! yield's question or an approval (other pauses, a listen channel, wait for a signal)
// and the person has not just turned it down.
func (c *call) canAsk(waiting string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ask && askable(waiting) && c.declined == "" && !c.unasked
}

// traced is ctx for the call's run: it carries the call, for OnInterrupt, and the call's
// event handler when the client wants progress or logs.
func (c *call) traced(ctx context.Context) context.Context {
	ctx = context.WithValue(ctx, callKey{}, c)
	if c.out == nil || (c.token == nil && c.level == "") {
		return ctx
	}
	return runtime.WithTrace(ctx, &runtime.Trace{OnEvent: c.event})
}

// OnInterrupt is the runtime.InterruptFunc for the Runtime of a Server (its Config's
// Runtime must be made with it): during a call whose client can ask its user while the call
// runs (elicitation, over stdio, before protocol 2026-07-28), it asks a |! yield's question
// or an approval through the client and answers with what the person said, so even a
// stage that cannot pause (in a called pipeline, a fan-out, an each) gets its answer. A
// declined question gets no answer. So does everything else (a listen, a run not started by
// a call, a client that cannot be asked now): the run pauses where it can, and a client of
// 2026-07-28 that can ask is asked then, by the call's result.
func OnInterrupt(ctx context.Context, in runtime.Interrupt) (any, bool, error) {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil || !c.askNow || !askable(in.Channel) {
		return nil, false, nil
	}
	req := mcp.ElicitationRequest{Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params: questionParams(c.p.decl.Name.Name, in.RunID, in.Channel, in.Message)}
	res, err := c.asker.RequestElicitation(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		c.s.log.Warn("the client could not ask its user; the run waits instead", "run", in.RunID, "error", err)
		c.mu.Lock()
		c.unasked = true
		c.mu.Unlock()
		return nil, false, nil
	}
	if res.Action == mcp.ElicitationResponseActionAccept {
		return answerPayload(in.Channel, res.Content), true, nil
	}
	if in.Channel == runtime.ChannelApproval {
		return "no", true, nil // declined, with no reason
	}
	c.mu.Lock()
	c.declined = actionText(res.Action)
	c.mu.Unlock()
	return nil, false, nil
}

func askable(channel string) bool {
	return channel == runtime.ChannelYield || channel == runtime.ChannelApproval
}

func actionText(a mcp.ElicitationResponseAction) string {
	if a == mcp.ElicitationResponseActionCancel {
		return "cancelled"
	}
	return "declined"
}

func (c *call) declinedNote() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.declined == "" {
		return ""
	}
	return "The question was " + c.declined + " in the client; the run still waits."
}

// event reports one run event: a finished stage as progress, every event as a log message
// at the level the client chose. It runs on the run's goroutine, so the notification is
// written before the run goes on, and before the result.
func (c *call) event(e runtime.Event) {
	if e.Type == "stage" && c.token != nil {
		c.done++
		n := c.p.stages[e.At]
		params := map[string]any{
			"progressToken": c.token,
			"progress":      c.done,
			"message":       fmt.Sprintf("stage %d of %d: %s", n, c.p.total, e.Target),
		}
		if c.done <= c.p.total {
			params["total"] = c.p.total
		}
		c.send(string(mcp.MethodNotificationProgress), params)
	}
	if c.level != "" {
		lvl := levelOf(e)
		if lvl.ShouldSendTo(c.level) {
			c.send(string(mcp.MethodNotificationMessage), map[string]any{"level": lvl, "logger": "halo", "data": e})
		}
	}
}

func (c *call) send(method string, params map[string]any) {
	if err := c.out.notify(method, params); err != nil {
		c.s.log.Debug("notification not sent", "method", method, "error", err)
	}
}

// levelOf is the log level of a run event.
func levelOf(e runtime.Event) mcp.LoggingLevel {
	switch {
	case e.Type == "violation":
		return mcp.LoggingLevelWarning
	case e.Type == "paused":
		return mcp.LoggingLevelNotice
	case e.Type == "run" && e.Status == runtime.Failed, e.Error != nil:
		return mcp.LoggingLevelError
	}
	return mcp.LoggingLevelInfo
}

// The key of the one question a paused run puts to the client.
const answerKey = "answer"

// A question is what the request state of a question holds: the run it continues, the tool
// that started it, and what the run waits for.
type question struct {
	Run  string `json:"r"`
	Tool string `json:"t"`
	For  string `json:"w"`
}

// ask turns a run paused for a person into a request for input: the client asks its user
// (elicitation/create) and calls the tool again with the answer and the request state,
// which answered continues the run with. Clients of protocol 2026-07-28 do this themselves;
// for earlier ones mcp-go sends elicitation/create over the connection and calls again.
func (s *Server) ask(c *call, res *runtime.Result, waiting string) *mcp.CallToolResult {
	var q any
	if res.Meta.Paused != nil {
		q = res.Meta.Paused.Question
	}
	name := c.p.decl.Name.Name
	state := s.seal(question{Run: res.RunID, Tool: name, For: waiting})
	return server.NewInputRequestBuilder(state).Elicit(answerKey, questionParams(name, res.RunID, waiting, textOf(q))).ToolResult()
}

// questionParams is the elicitation that puts a run's question to the person: a yield's
// question with one text field, or an approval to accept (with a reason when not).
func questionParams(tool, runID, channel, text string) mcp.ElicitationParams {
	params := mcp.ElicitationParams{Mode: mcp.ElicitationModeForm}
	if channel == runtime.ChannelApproval {
		params.Message = fmt.Sprintf("%s (run %s): %s", tool, runID, text)
		params.RequestedSchema = map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve": map[string]any{"type": "boolean", "title": "Approve", "default": true},
				"reason":  map[string]any{"type": "string", "title": "Why not (when not approving)"},
			},
			"required": []string{"approve"},
		}
		return params
	}
	params.Message = fmt.Sprintf("%s (run %s) asks: %s", tool, runID, text)
	params.RequestedSchema = map[string]any{
		"type": "object",
		"properties": map[string]any{
			answerKey: map[string]any{"type": "string", "title": "Answer", "description": truncate(text, 500)},
		},
		"required": []string{answerKey},
	}
	return params
}

// answered continues the run a question was about with the client's answer.
func (s *Server) answered(ctx context.Context, c *call, req mcp.CallToolRequest) *mcp.CallToolResult {
	q, err := s.open(req.Params.RequestState)
	if err == nil && q.Tool != c.p.decl.Name.Name {
		err = fmt.Errorf("the request state is of tool %s, not %s", q.Tool, c.p.decl.Name.Name)
	}
	if err != nil {
		return errorResult(CodeRequestState, err.Error()+"; call the tool again without one to start a new run", "")
	}
	ans := server.ElicitationResponse(req.Params.InputResponses, answerKey)
	if ans == nil {
		return errorResult(CodeRequestState, "the call carries no answer to the question (input response "+answerKey+")", q.Run)
	}
	var payload any
	switch ans.Action {
	case mcp.ElicitationResponseActionAccept:
		payload = answerPayload(q.For, ans.Content)
	default:
		if q.For != runtime.ChannelApproval {
			// A question declined stays open: the run waits, and can be answered later.
			res := &runtime.Result{RunID: q.Run, Status: runtime.Paused}
			return s.paused(c.p, res, q.For, "The question was "+actionText(ans.Action)+" in the client; the run still waits.")
		}
		payload = "no" // an approval declined, with no reason
	}
	// The runtime refuses a run that no longer waits on that channel, or that another answer
	// is continuing already.
	res, err := s.cfg.Runtime.Signal(c.traced(ctx), q.Run, q.For, payload)
	return s.finish(c, res, err)
}

// answerPayload is what a run continues with when the person accepted: a yield's answer
// (JSON when it is JSON, as halo resume reads --payload), or an approval's verdict.
func answerPayload(waiting string, content any) any {
	obj, _ := content.(map[string]any)
	if waiting == runtime.ChannelApproval {
		if ok, isBool := obj["approve"].(bool); isBool && !ok {
			if reason, _ := obj["reason"].(string); strings.TrimSpace(reason) != "" {
				return map[string]any{"approved": false, "reason": reason}
			}
			return map[string]any{"approved": false}
		}
		return "approve"
	}
	v, ok := obj[answerKey]
	if !ok {
		return content
	}
	if s, ok := v.(string); ok {
		var j any
		if json.Unmarshal([]byte(s), &j) == nil {
			return j
		}
	}
	return v
}

// seal makes the request state of q: its JSON and an HMAC of it, so a client can neither
// forge one nor point one at another run.
func (s *Server) seal(q question) string {
	b, _ := json.Marshal(q)
	m := hmac.New(sha256.New, s.key)
	m.Write(b)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(b) + "." + enc.EncodeToString(m.Sum(nil))
}

var errState = errors.New("the request state was not made by this server (or it was restarted since)")

func (s *Server) open(state string) (question, error) {
	var q question
	body, sig, ok := strings.Cut(state, ".")
	if !ok || len(state) > 4096 {
		return q, errState
	}
	enc := base64.RawURLEncoding
	b, err1 := enc.DecodeString(body)
	got, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return q, errState
	}
	m := hmac.New(sha256.New, s.key)
	m.Write(b)
	if !hmac.Equal(got, m.Sum(nil)) {
		return q, errState
	}
	if err := json.Unmarshal(b, &q); err != nil || q.Run == "" {
		return q, errState
	}
	return q, nil
}
