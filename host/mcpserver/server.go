package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

// Limits a server applies unless its Config says otherwise.
const (
	// DefaultMaxRequestBytes bounds one JSON-RPC message (a stdio line, an HTTP body).
	DefaultMaxRequestBytes = 4 << 20
	// DefaultMaxCalls bounds the requests one stdio connection, or the HTTP handler, serves
	// at once; more are refused with a JSON-RPC error until some finish.
	DefaultMaxCalls = 256
)

// Stable error codes a tool result or a refused request may carry, beside the runtime's.
const (
	// CodeOutput: the run completed, but its output does not fit the pipeline's declared
	// result schema.
	CodeOutput = "BAD_OUTPUT"
	// CodeRequestState: a client's answer to a question came back with a request state this
	// server did not make (or made before it restarted).
	CodeRequestState = "BAD_REQUEST_STATE"
	// CodeTooLarge: a message over the size limit.
	CodeTooLarge = "REQUEST_TOO_LARGE"
	// CodeBusy: more requests at once than the server serves.
	CodeBusy = "TOO_MANY_REQUESTS"
)

// Config is what a Server is built from.
type Config struct {
	// Program is the validated program whose pipelines become tools, and Runtime the
	// runtime made from it, which runs them and saves their records. Make the runtime with
	// OnInterrupt as its Config.OnInterrupt, so questions can be asked during a call.
	Program *lang.Program
	Runtime *runtime.Runtime
	// Tools describes the methods of provider types that can say without opening anything
	// (built-ins, http packages), for the tools' annotations; nil makes every tool call's
	// effect unknown.
	Tools *tool.Registry
	// Name and Version identify the server to clients; empty means "halo" and "dev".
	Name, Version string
	// Continue says how a person continues a paused run outside the client: a `halo resume`
	// command under halo mcp, the approval link or Studio under halo serve. waitingFor is
	// the run's context.meta.paused.waitingFor ("yield", "approval"). Nil means
	// `halo resume <file> <runId> --payload <answer>` with the pipeline's file.
	Continue func(runID, waitingFor string, pd *lang.PipelineDecl) string
	// Logger gets the server's own warnings and debug lines; nil means none.
	Logger hclog.Logger
	// Secret keys the request state a question to the client carries; nil means a random one
	// (a state then lasts as long as the process). Replicas behind one URL need the same.
	Secret []byte
	// MaxRequestBytes bounds one message; zero means DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// MaxCalls bounds the requests served at once per stdio connection, and by one HTTP
	// handler; zero means DefaultMaxCalls.
	MaxCalls int
}

// A Server exposes the pipelines of one program as MCP tools. It is safe for concurrent
// use: one Server may serve a stdio connection and an HTTP handler at once.
type Server struct {
	cfg   Config
	log   hclog.Logger
	mcp   *server.MCPServer
	types types
	pipes map[string]*pipeline
	key   []byte
	// fastCalls counts the calls the fast path served (fastcall.go), for tests.
	fastCalls atomic.Int64
}

// A pipeline is one tool.
type pipeline struct {
	decl *lang.PipelineDecl
	tool mcp.Tool
	// stages numbers each stage by where it is written: 1 to total, a fallback taking the
	// number of the stage it stands in for.
	stages map[string]int
	total  int
	// output is set when the result is a schema type, so the structured content is checked.
	output bool
}

// New makes the server: one tool per pipeline of cfg.Program, in source order.
func New(cfg Config) (*Server, error) {
	if cfg.Program == nil || cfg.Runtime == nil {
		return nil, errors.New("mcpserver: a Program and its Runtime are needed")
	}
	if cfg.Name == "" {
		cfg.Name = "halo"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.MaxCalls <= 0 {
		cfg.MaxCalls = DefaultMaxCalls
	}
	s := &Server{cfg: cfg, log: cfg.Logger, types: types{prog: cfg.Program}, pipes: map[string]*pipeline{}}
	if s.log == nil {
		s.log = hclog.NewNullLogger()
	}
	s.key = cfg.Secret
	if len(s.key) == 0 {
		s.key = make([]byte, 32)
		if _, err := rand.Read(s.key); err != nil {
			return nil, fmt.Errorf("mcpserver: %w", err)
		}
	}
	s.mcp = server.NewMCPServer(cfg.Name, cfg.Version,
		server.WithToolCapabilities(false),
		server.WithLogging(),
		server.WithRecovery(),
		server.WithInstructions("Each tool runs a Halo pipeline to the end and returns its output. A run that waits for a person says so, with its run id and how to continue it."),
	)
	var tools []server.ServerTool
	for _, d := range cfg.Program.Decls() {
		pd, ok := d.(*lang.PipelineDecl)
		if !ok {
			continue
		}
		p, err := s.describe(pd)
		if err != nil {
			return nil, err
		}
		s.pipes[pd.Name.Name] = p
		tools = append(tools, server.ServerTool{Tool: p.tool, Handler: s.handler(p)})
	}
	s.mcp.AddTools(tools...)
	return s, nil
}

// Tools returns the tools as clients list them, in source order.
func (s *Server) Tools() []mcp.Tool {
	var out []mcp.Tool
	for _, d := range s.cfg.Program.Decls() {
		if pd, ok := d.(*lang.PipelineDecl); ok {
			out = append(out, s.pipes[pd.Name.Name].tool)
		}
	}
	return out
}

// describe builds pd's tool: description, schemas, annotations.
func (s *Server) describe(pd *lang.PipelineDecl) (*pipeline, error) {
	p := &pipeline{decl: pd, stages: map[string]int{}}
	for _, st := range pd.Stages {
		if st.Op != lang.OpFallback {
			p.total++
		}
		p.stages[st.Pos.String()] = max(p.total, 1)
	}
	desc := pd.Doc
	if desc == "" {
		result := "Result"
		if pd.Result != nil {
			result = pd.Result.String()
		}
		desc = fmt.Sprintf("Runs the Halo pipeline %s(%s) -> %s.", pd.Name.Name, paramList(pd), result)
	}
	in, err := json.Marshal(s.types.inputSchema(pd))
	if err != nil {
		return nil, fmt.Errorf("pipeline %s: input schema: %w", pd.Name.Name, err)
	}
	p.tool = mcp.Tool{Name: pd.Name.Name, Description: desc, RawInputSchema: in}
	if out := s.types.outputSchema(pd); out != nil {
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("pipeline %s: output schema: %w", pd.Name.Name, err)
		}
		p.tool.RawOutputSchema = b
		p.output = true
	}
	var describe func(string) []tool.Method
	if s.cfg.Tools != nil {
		describe = func(provider string) []tool.Method {
			t, ok := s.cfg.Tools.Lookup(provider)
			if !ok {
				return nil
			}
			return t.Methods
		}
	}
	r := reachOf(s.cfg.Program, pd, describe)
	p.tool.Annotations = mcp.ToolAnnotation{
		ReadOnlyHint:  mcp.ToBoolPtr(r.readOnly()),
		OpenWorldHint: mcp.ToBoolPtr(r.openWorld()),
	}
	if !r.readOnly() {
		p.tool.Annotations.DestructiveHint = mcp.ToBoolPtr(true)
	}
	return p, nil
}

// handler answers tools/call for p, as mcp-go calls it.
func (s *Server) handler(p *pipeline) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.callTool(ctx, p, req), nil
	}
}

// callTool serves one call of p's tool: runs the pipeline (or continues the run a question
// was about) and makes the result. It always has one: every failure is a tool error.
func (s *Server) callTool(ctx context.Context, p *pipeline, req mcp.CallToolRequest) *mcp.CallToolResult {
	c := s.newCall(ctx, p, req)
	if req.Params.RequestState != "" || len(req.Params.InputResponses) > 0 {
		return s.answered(ctx, c, req)
	}
	args, err := s.types.checkArgs(p.decl, req.Params.Arguments)
	if err != nil {
		return errorResult(runtime.CodeInput, err.Error(), "")
	}
	res, err := s.cfg.Runtime.Run(c.traced(ctx), p.decl.Name.Name, args)
	return s.finish(c, res, err)
}

// finish turns how a run ended into the tool's result. A run paused for a person, when the
// client can ask its user, becomes a question (see ask).
func (s *Server) finish(c *call, res *runtime.Result, err error) *mcp.CallToolResult {
	if res == nil {
		code := errcode.Code(err)
		if code == "" {
			code = runtime.CodeInternal
		}
		return errorResult(code, err.Error(), "")
	}
	if err != nil {
		// The run ended, but its record was not saved: the call fails with the store's code
		// (STORE: the disk is full), as halo run does, so that no client takes for kept a
		// run nobody can read again.
		s.log.Error("run record not saved", "run", res.RunID, "error", err)
		code := errcode.Code(err)
		if code == "" {
			code = runtime.CodeRun
		}
		return errorResult(code, fmt.Sprintf("the run ended %s, but its record could not be saved: %v", res.Status, err), res.RunID)
	}
	switch res.Status {
	case runtime.Completed:
		return s.completed(c.p, res)
	case runtime.Paused:
		waiting := waitingFor(res)
		if c.canAsk(waiting) {
			return s.ask(c, res, waiting)
		}
		return s.paused(c.p, res, waiting, c.declinedNote())
	default:
		code, msg, at := runtime.CodeInternal, "the run failed", ""
		if res.Error != nil {
			code, msg, at = res.Error.Code, res.Error.Message, res.Error.At
		}
		if at != "" {
			msg = "at " + at + ": " + msg
		}
		return errorResult(code, msg, res.RunID)
	}
}

func waitingFor(res *runtime.Result) string {
	if res.Meta.Paused != nil && res.Meta.Paused.WaitingFor != "" {
		return res.Meta.Paused.WaitingFor
	}
	return "yield"
}

// completed is a finished run's result: the output as text, and as structured content
// when it is an object (checked against the result schema when the pipeline declares one).
func (s *Server) completed(p *pipeline, res *runtime.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(textOf(res.Output))}}
	if obj, ok := res.Output.(map[string]any); ok {
		out.StructuredContent = obj
	}
	if p.output {
		if err := s.types.check(p.decl.Result, res.Output, 0); err != nil {
			return errorResult(CodeOutput, fmt.Sprintf("the run completed, but its output does not fit %s: %v", p.decl.Result, err), res.RunID)
		}
	}
	out.Meta = runMeta(res.RunID, runtime.Completed)
	return out
}

// paused is the result of a run that waits for a person the client was not asked. A tool
// with an output schema marks it isError: clients check a successful result's structured
// content against the schema, and a pause has none.
func (s *Server) paused(p *pipeline, res *runtime.Result, waiting, note string) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "Paused waiting for %s, run id %s", waiting, res.RunID)
	if res.Meta.Paused != nil && res.Meta.Paused.Question != nil {
		fmt.Fprintf(&b, ": %s", textOf(res.Meta.Paused.Question))
	}
	if note != "" {
		fmt.Fprintf(&b, "\n%s", note)
	}
	fmt.Fprintf(&b, "\n%s", s.continueText(res.RunID, waiting, p.decl))
	out := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(b.String())}, IsError: p.output}
	out.Meta = runMeta(res.RunID, runtime.Paused)
	return out
}

func (s *Server) continueText(runID, waiting string, pd *lang.PipelineDecl) string {
	if s.cfg.Continue != nil {
		return s.cfg.Continue(runID, waiting, pd)
	}
	payload := "<answer>"
	if waiting == runtime.ChannelApproval {
		payload = "approve"
	}
	return fmt.Sprintf("Continue it with: halo resume %s %s --payload %s", pd.Pos.File, runID, payload)
}

// errorResult is a tool error: the reason, its code and the run id.
func errorResult(code, msg, runID string) *mcp.CallToolResult {
	text := msg
	if code != "" {
		text += " [" + code + "]"
	}
	if runID != "" {
		text += "\nRun id: " + runID
	}
	out := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, IsError: true}
	if runID != "" {
		out.Meta = runMeta(runID, runtime.Failed)
	}
	return out
}

// runMeta is the _meta of a result: the run id and status, for clients that keep them.
func runMeta(runID string, st runtime.Status) *mcp.Meta {
	return mcp.NewMetaFromMap(map[string]any{"halo/runId": runID, "halo/status": string(st)})
}

// textOf is a value as text: a string as it is, anything else as JSON.
func textOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
