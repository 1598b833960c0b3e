package telemetry

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"halolang.dev/halo/host/agent"
	"halolang.dev/halo/host/runtime"
)

// Attribute keys of Halo's own (beside the semantic conventions').
const (
	KeyRunID      = attribute.Key("halo.run.id")
	KeyPipeline   = attribute.Key("halo.pipeline")
	KeyRunStatus  = attribute.Key("halo.run.status")
	KeyResumed    = attribute.Key("halo.run.resumed")
	KeyStageIndex = attribute.Key("halo.stage.index")
	KeyStageOp    = attribute.Key("halo.stage.op")
	KeyAt         = attribute.Key("halo.at")
	KeyTarget     = attribute.Key("halo.target")
	KeyItem       = attribute.Key("halo.item")
	KeyArm        = attribute.Key("halo.arm")
	KeyAttempt    = attribute.Key("halo.attempt")
	KeyStep       = attribute.Key("halo.step")
	KeyMocked     = attribute.Key("halo.mocked")
	KeyCost       = attribute.Key("halo.cost_usd")
	KeyModel      = attribute.Key("halo.model")
	KeyDecision   = attribute.Key("halo.tool.decision")
	KeyDetail     = attribute.Key("halo.tool.detail")
	KeyChannel    = attribute.Key("halo.channel")
	KeyErrorMsg   = attribute.Key("halo.error.message")
)

// runSpans are the open spans of one run.
type runSpans struct {
	ctx   context.Context // carries the run's span
	run   trace.Span
	stage trace.Span // the stage running now, or nil
	sctx  context.Context
	// target is the stage's target, to tell when an agent's model request is the stage's.
	target string
	// pending are the "tool" events of calls an agent made, waiting for the "agent_tool"
	// event that says what was decided on them, by agent and target, oldest first.
	pending map[string][]pendingTool
}

// A pendingTool is a tool call's event kept until its decision is known, and where its
// span goes.
type pendingTool struct {
	ev  runtime.Event
	ctx context.Context
}

// parent returns the context new spans of the run start under: the stage's, else the run's.
func (rs *runSpans) parent() (context.Context, trace.Span) {
	if rs.stage != nil {
		return rs.sctx, rs.stage
	}
	return rs.ctx, rs.run
}

// abandon ends the spans of a run that did not end before the tracer shut down.
func (rs *runSpans) abandon(t *Tracer) {
	t.flush(rs)
	if rs.stage != nil {
		rs.stage.SetStatus(codes.Error, "the process stopped during the stage")
		rs.stage.End()
	}
	rs.run.SetStatus(codes.Error, "the process stopped during the run")
	rs.run.End()
}

// Mark opens and closes the spans of runs and stages (a runtime.MarkFunc).
func (t *Tracer) Mark(ctx context.Context, m runtime.Mark) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	rs := t.runs[m.RunID]
	switch {
	case m.Kind == "run" && !m.End:
		if rs != nil {
			rs.abandon(t)
		}
		attrs := []attribute.KeyValue{KeyRunID.String(m.RunID), KeyPipeline.String(m.Pipeline)}
		if m.Resumed {
			attrs = append(attrs, KeyResumed.Bool(true))
		}
		sctx, span := t.tracer.Start(ctx, "run "+m.Pipeline, trace.WithTimestamp(m.Time), trace.WithAttributes(attrs...))
		t.runs[m.RunID] = &runSpans{ctx: sctx, run: span}
	case m.Kind == "run" && rs != nil:
		t.flush(rs)
		if rs.stage != nil {
			rs.stage.End(trace.WithTimestamp(m.Time))
			rs.stage = nil
		}
		rs.run.SetAttributes(KeyRunStatus.String(string(m.Status)))
		failed(rs.run, m.Error)
		rs.run.End(trace.WithTimestamp(m.Time))
		delete(t.runs, m.RunID)
	case m.Kind == "stage" && rs != nil && !m.End:
		t.flush(rs)
		if rs.stage != nil {
			rs.stage.End(trace.WithTimestamp(m.Time))
		}
		name := m.Target
		if name == "" {
			// "|> branch" is "branch".
			name = strings.TrimLeft(m.Op, "|>!?*<~ ")
		}
		attrs := []attribute.KeyValue{KeyStageIndex.Int(m.Index), KeyAt.String(m.At), KeyTarget.String(m.Target)}
		if m.Op != "" { // a trace made from a record knows no operators
			attrs = append(attrs, KeyStageOp.String(m.Op))
		}
		rs.sctx, rs.stage = t.tracer.Start(rs.ctx, "stage "+name, trace.WithTimestamp(m.Time), trace.WithAttributes(attrs...))
		rs.target = m.Target
	case m.Kind == "stage" && rs != nil && rs.stage != nil:
		t.flush(rs)
		failed(rs.stage, m.Error)
		rs.stage.End(trace.WithTimestamp(m.Time))
		rs.stage, rs.sctx, rs.target = nil, nil, ""
	}
}

// failed marks span as failed with info, when there is one.
func failed(span trace.Span, info *runtime.ErrorInfo) {
	if info == nil {
		return
	}
	span.SetAttributes(semconv.ErrorTypeKey.String(info.Code), KeyErrorMsg.String(info.Message))
	span.SetStatus(codes.Error, info.Code+": "+info.Message)
}

// Event adds what a run's event says to its spans (a runtime.Config.OnEvent).
func (t *Tracer) Event(e runtime.Event) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	rs := t.runs[e.RunID]
	if rs == nil {
		return
	}
	pctx, parent := rs.parent()
	switch e.Type {
	case "llm":
		t.llmSpan(rs, pctx, parent, e)
	case "tool":
		if e.Agent != "" {
			// Perhaps a call the agent's model asked for: its span waits for the decision.
			if rs.pending == nil {
				rs.pending = map[string][]pendingTool{}
			}
			k := e.Agent + "\x00" + e.Target
			rs.pending[k] = append(rs.pending[k], pendingTool{ev: e, ctx: pctx})
			return
		}
		t.toolSpan(pctx, e, nil)
	case "agent_tool":
		k := e.Agent + "\x00" + e.Target
		var ran *runtime.Event
		if list := rs.pending[k]; len(list) > 0 {
			ran = &list[0].ev
			if len(list) == 1 {
				delete(rs.pending, k)
			} else {
				rs.pending[k] = list[1:]
			}
		}
		t.toolSpan(pctx, e, ran)
	case "violation":
		parent.AddEvent("halo.violation", trace.WithTimestamp(e.Time), trace.WithAttributes(where(e,
			attribute.String("halo.policy", e.Policy), attribute.String("halo.rule", e.Rule),
			attribute.String("halo.phase", e.Phase), attribute.String("halo.message", e.Message),
			semconv.GenAIAgentName(e.Agent), KeyTarget.String(e.Target))...))
	case "loop":
		parent.AddEvent("halo.loop", trace.WithTimestamp(e.Time), trace.WithAttributes(where(e,
			semconv.GenAIAgentName(e.Agent), KeyAttempt.Int(e.Attempt), attribute.String("halo.message", e.Message))...))
	case "branch":
		parent.AddEvent("halo.branch", trace.WithTimestamp(e.Time), trace.WithAttributes(where(e, attribute.String("halo.message", e.Message))...))
	case "answered":
		parent.AddEvent("halo.answered", trace.WithTimestamp(e.Time), trace.WithAttributes(where(e, KeyChannel.String(e.Channel))...))
	case "paused":
		rs.run.AddEvent("halo.paused", trace.WithTimestamp(e.Time), trace.WithAttributes(where(e, KeyChannel.String(e.Channel))...))
	}
}

// where adds the event's place (stage, each item, branch arm) to attrs.
func where(e runtime.Event, attrs ...attribute.KeyValue) []attribute.KeyValue {
	if e.At != "" {
		attrs = append(attrs, KeyAt.String(e.At))
	}
	if e.Item != nil {
		attrs = append(attrs, KeyItem.Int(*e.Item))
	}
	if e.Arm != "" {
		attrs = append(attrs, KeyArm.String(e.Arm))
	}
	return attrs
}

// span starts and ends a span of what an event reports, which took e.DurationMs and
// ended at e.Time.
func (t *Tracer) span(ctx context.Context, name string, kind trace.SpanKind, e runtime.Event, attrs []attribute.KeyValue) trace.Span {
	start := e.Time.Add(-time.Duration(e.DurationMs) * time.Millisecond)
	_, span := t.tracer.Start(ctx, name, trace.WithTimestamp(start), trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	return span
}

// llmSpan records one model request, in the GenAI semantic conventions' terms.
func (t *Tracer) llmSpan(rs *runSpans, ctx context.Context, parent trace.Span, e runtime.Event) {
	provider, model, _ := strings.Cut(e.Model, "/")
	if model == "" {
		model, provider = provider, ""
	}
	attrs := where(e,
		semconv.GenAIOperationNameChat,
		semconv.GenAIRequestModel(model),
		KeyModel.String(e.Model),
		KeyTarget.String(e.Target),
	)
	if p := providerName(provider); p != "" {
		attrs = append(attrs, semconv.GenAIProviderNameKey.String(p))
	}
	if e.Agent != "" {
		attrs = append(attrs, semconv.GenAIAgentName(e.Agent))
	}
	if e.Usage != nil {
		attrs = append(attrs, semconv.GenAIUsageInputTokens(e.Usage.InputTokens), semconv.GenAIUsageOutputTokens(e.Usage.OutputTokens))
	}
	if e.Cost != 0 {
		attrs = append(attrs, KeyCost.Float64(e.Cost))
	}
	if e.Attempt != 0 {
		attrs = append(attrs, KeyAttempt.Int(e.Attempt))
	}
	if e.Mocked {
		attrs = append(attrs, KeyMocked.Bool(true))
	}
	if t.cfg.Content {
		attrs = append(attrs, semconv.GenAIInputMessagesKey.String(messages("user", e.Prompt)))
		if e.Error == nil {
			attrs = append(attrs, semconv.GenAIOutputMessagesKey.String(messages("assistant", e.Answer)))
		}
	}
	span := t.span(ctx, "chat "+model, trace.SpanKindClient, e, attrs)
	if e.Error != nil {
		failed(span, e.Error)
	}
	span.End(trace.WithTimestamp(e.Time))
	// The stage's own agent call: its span is the agent's invocation.
	if e.Agent != "" && e.Target == rs.target && parent == rs.stage {
		parent.SetAttributes(semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(e.Agent))
	}
}

// flush makes the spans of tool calls an agent made that no decision followed: those of an
// agent call's tool: T, which the pipeline makes for the agent.
func (t *Tracer) flush(rs *runSpans) {
	for k, list := range rs.pending {
		for _, p := range list {
			t.toolSpan(p.ctx, p.ev, nil)
		}
		delete(rs.pending, k)
	}
}

// toolSpan records a tool call: one a pipeline makes ("tool"), or one an agent's model
// asked for ("agent_tool"), with the decision taken on it and, when it ran, what its
// "tool" event said (ran).
func (t *Tracer) toolSpan(ctx context.Context, e runtime.Event, ran *runtime.Event) {
	attrs := where(e,
		semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(e.Target),
		KeyTarget.String(e.Target),
	)
	if e.Agent != "" {
		attrs = append(attrs, semconv.GenAIAgentName(e.Agent), semconv.GenAIToolType("function"))
	}
	if e.Decision != "" {
		attrs = append(attrs, KeyDecision.String(e.Decision))
	}
	if e.Detail != "" {
		attrs = append(attrs, KeyDetail.String(e.Detail))
	}
	output, ranErr, mocked := e.Output, e.Error, e.Mocked
	if ran != nil {
		output, ranErr, mocked = ran.Output, ran.Error, ran.Mocked
	}
	if mocked {
		attrs = append(attrs, KeyMocked.Bool(true))
	}
	if t.cfg.Content {
		if len(e.Args) > 0 {
			attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(string(e.Args)))
		}
		if output != nil {
			if b, err := json.Marshal(output); err == nil {
				attrs = append(attrs, semconv.GenAIToolCallResultKey.String(string(b)))
			}
		}
	}
	span := t.span(ctx, "execute_tool "+e.Target, trace.SpanKindInternal, e, attrs)
	switch {
	case ranErr != nil:
		failed(span, ranErr)
	case e.Decision == agent.Errored:
		span.SetStatus(codes.Error, e.Detail)
	}
	span.End(trace.WithTimestamp(e.Time))
}

// messages is one message in the shape gen_ai.input.messages and gen_ai.output.messages
// take: [{"role", "parts": [{"type": "text", "content"}]}].
func messages(role, text string) string {
	type part struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	type message struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	b, _ := json.Marshal([]message{{Role: role, Parts: []part{{Type: "text", Content: text}}}})
	return string(b)
}

// providerName is gen_ai.provider.name for a model reference's provider: the semantic
// conventions' name where they have one.
func providerName(p string) string {
	switch p {
	case "gemini":
		return "gcp.gemini"
	case "mistral":
		return "mistral_ai"
	}
	return p
}
