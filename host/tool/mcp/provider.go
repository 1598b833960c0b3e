// Package mcp owns the MCP provider: `tool X : MCP(...)` declarations and mcp tool packages,
// spoken to with github.com/mark3labs/mcp-go's client over stdio or Streamable HTTP and
// offered to pipelines and agents through the tool.Provider interface. It owns the
// declaration's options (CheckDeclaration, FromDeclaration, PackageConfig), the clean
// environment and process group of stdio servers, reconnecting, and the mapping of MCP tool
// results and annotations to Halo values and effects.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
)

// ProtocolVersion is the MCP revision Halo asks for. Servers may answer with any of
// AcceptedVersions.
const ProtocolVersion = "2025-06-18"

// AcceptedVersions are the protocol revisions Halo works with, newest first.
var AcceptedVersions = []string{"2025-06-18", "2025-03-26", "2024-11-05"}

// The built-in methods every MCP tool has. They win over server tools of the same names.
const (
	ListTools     = "list_tools"
	ListResources = "list_resources"
	ReadResource  = "read_resource"
)

// IsBuiltin reports whether name is one of Halo's own methods of an MCP tool.
func IsBuiltin(name string) bool {
	return name == ListTools || name == ListResources || name == ReadResource
}

// Type returns the `MCP` provider type for a registry. logger receives server stderr and
// connection events; it may be nil.
func Type(logger hclog.Logger) tool.Type {
	return tool.Type{
		Name:        "MCP",
		Description: "An MCP server's tools, over stdio (a command) or Streamable HTTP (url:)",
		Kind:        tool.KindMCP,
		Check:       CheckDeclaration,
		Open: func(ctx context.Context, d tool.Declaration) (tool.Provider, error) {
			cfg, err := FromDeclaration(d)
			if err != nil {
				return nil, err
			}
			if cfg.Logger == nil {
				cfg.Logger = logger
			}
			return Open(ctx, cfg)
		},
	}
}

// A Provider is one MCP server behind the tool.Provider interface. It holds one connection,
// opened on first use and reused by every call; a stdio server that has exited is started
// again on the next call. It is safe for concurrent calls.
type Provider struct {
	cfg    Config
	logger hclog.Logger

	mu     sync.Mutex // guards sess and closed; held while connecting
	sess   *session
	closed bool

	nextID   atomic.Int64
	progMu   sync.Mutex
	progress map[string]*progressQueue
}

var _ tool.Provider = (*Provider)(nil)

// session is one live connection.
type session struct {
	client  *client.Client
	tr      transport.Interface
	stdio   *stdioTransport // nil over HTTP
	version string
	caps    mcp.ServerCapabilities
}

func (s *session) alive() bool { return s.stdio == nil || s.stdio.alive() }

// Open checks cfg and returns a provider for it. Nothing is started or connected until the
// first Methods or Call.
func Open(_ context.Context, cfg Config) (*Provider, error) {
	if (len(cfg.Command) == 0) == (cfg.URL == "") {
		return nil, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: give exactly one of a command and a URL", cfg.Name)
	}
	if cfg.URL != "" {
		if err := checkURL(cfg.URL); err != nil {
			return nil, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: %v", cfg.Name, err)
		}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = tool.DefaultMaxResultBytes
	}
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &Provider{
		cfg:      cfg,
		logger:   logger.Named("mcp").With("tool", cfg.Name),
		progress: map[string]*progressQueue{},
	}, nil
}

// Close stops the server (stdio) or ends the session (HTTP). Calls after Close fail.
func (p *Provider) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.sess == nil {
		return nil
	}
	err := p.sess.client.Close()
	p.sess = nil
	return err
}

// connection returns the live session, connecting (or reconnecting) first when needed.
func (p *Provider) connection(ctx context.Context) (*session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, tool.Errorf(tool.CodeToolConfig, "MCP tool %s is closed", p.cfg.Name)
	}
	if p.sess != nil && p.sess.alive() {
		return p.sess, nil
	}
	if p.sess != nil {
		p.logger.Debug("the server exited; starting it again", "detail", p.sess.stdio.exitText())
		if err := p.sess.client.Close(); err != nil {
			p.logger.Debug("closing the old connection", "error", err)
		}
		p.sess = nil
	}
	s, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	p.sess = s
	return s, nil
}

// drop forgets s when it is still the current session, so the next call reconnects.
func (p *Provider) drop(s *session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sess == s {
		p.sess = nil
		if err := s.client.Close(); err != nil {
			p.logger.Debug("closing a dropped connection", "error", err)
		}
	}
}

func (p *Provider) dial(ctx context.Context) (*session, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	s := &session{}
	if p.cfg.URL != "" {
		headers := map[string]string{}
		for k, v := range p.cfg.Headers {
			headers[k] = v
		}
		if p.cfg.APIKey != "" {
			headers["Authorization"] = "Bearer " + p.cfg.APIKey
		}
		// mcp-go's own log lines (a stream that broke off, say) go to Halo's log at debug
		// level, not to stderr.
		slogger := slog.New(slog.NewTextHandler(p.logger.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}), nil))
		tr, err := transport.NewStreamableHTTP(p.cfg.URL, transport.WithHTTPHeaders(headers),
			transport.WithHTTPBasicClient(httpClient(p.cfg, headers, p.cfg.MaxResultBytes)), transport.WithHTTPLogger(slogger))
		if err != nil {
			return nil, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: %v", p.cfg.Name, err)
		}
		s.tr = tr
	} else {
		s.stdio = newStdioTransport(p.cfg, p.logger)
		s.tr = s.stdio
	}
	// Pinning a pre-2026 version keeps mcp-go on the initialize handshake: left to itself it
	// opens with the draft protocol's server/discover, and a server that answers unknown
	// methods with {} would never receive initialize.
	s.client = client.NewClient(s.tr, client.WithProtocolVersion(ProtocolVersion))
	if err := s.client.Start(ctx); err != nil {
		return nil, p.startError(s, err)
	}
	s.client.OnNotification(p.notify)
	ctx, tooLarge := withLimitFlag(ctx)
	res, err := s.client.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: ProtocolVersion,
		ClientInfo:      mcp.Implementation{Name: "halo", Version: "0"},
	}})
	if err != nil {
		defer s.client.Close()
		if tooLarge.Load() {
			err = p.tooLarge()
		}
		return nil, p.startError(s, err)
	}
	if !accepted(res.ProtocolVersion) {
		s.client.Close()
		return nil, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: the server speaks protocol version %s; Halo speaks %s",
			p.cfg.Name, res.ProtocolVersion, strings.Join(AcceptedVersions, ", "))
	}
	s.version = res.ProtocolVersion
	s.caps = res.Capabilities
	p.logger.Debug("connected", "server", res.ServerInfo.Name, "version", res.ServerInfo.Version, "protocol", res.ProtocolVersion)
	return s, nil
}

func accepted(v string) bool {
	for _, a := range AcceptedVersions {
		if a == v {
			return true
		}
	}
	return false
}

// startError explains why a server could not be started or reached.
func (p *Provider) startError(s *session, err error) error {
	var te *tool.Error
	if errors.As(err, &te) {
		if !strings.HasPrefix(te.Message, "MCP tool ") {
			te.Message = fmt.Sprintf("MCP tool %s: %s", p.cfg.Name, te.Message)
		}
		return te
	}
	var version mcp.UnsupportedProtocolVersionError
	if errors.As(err, &version) {
		// An answer, and a final one: the server speaks a protocol Halo does not.
		return tool.Errorf(tool.CodeToolConfig, "MCP tool %s: the server speaks protocol version %s; Halo speaks %s",
			p.cfg.Name, version.Version, strings.Join(AcceptedVersions, ", "))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		msg := fmt.Sprintf("MCP tool %s: the server did not answer initialize within %v", p.cfg.Name, p.cfg.Timeout)
		if s.stdio != nil {
			if tail := s.stdio.stderrText(); tail != "" {
				msg += "; its stderr ends with: " + tail
			}
		}
		return &tool.Error{Code: tool.CodeTimeout, Message: msg, Retryable: true, Err: err}
	}
	if s.stdio != nil {
		return &tool.Error{Code: tool.CodeToolCrashed, Retryable: true, Err: err,
			Message: fmt.Sprintf("MCP tool %s: the server %q did not start: %v%s", p.cfg.Name, strings.Join(p.cfg.Command, " "), err, s.stdio.exitText())}
	}
	if e := unauthorized(p.cfg, err); e != nil {
		return e
	}
	return httpError(&tool.Error{Code: tool.CodeToolError, Retryable: true, Err: err,
		Message: fmt.Sprintf("MCP tool %s: cannot connect to %s: %v", p.cfg.Name, p.cfg.URL, err)})
}

// unauthorized explains an HTTP 401, which no retry will cure.
func unauthorized(cfg Config, err error) *tool.Error {
	var auth *transport.AuthorizationRequiredError
	if !errors.As(err, &auth) {
		return nil
	}
	hint := "the server wants credentials: give apiKey: (sent as a Bearer token) or headers:"
	if cfg.APIKey != "" {
		hint = "the server refused the apiKey: given"
	}
	return &tool.Error{Code: tool.CodeHTTPError, Status: 401, Err: err,
		Message: fmt.Sprintf("MCP tool %s: HTTP 401 from %s: %s", cfg.Name, cfg.URL, hint)}
}

var statusRE = regexp.MustCompile(`status (\d{3})`)

// httpError turns mcp-go's "request failed with status N" into an HTTP_ERROR with the status.
func httpError(e *tool.Error) *tool.Error {
	m := statusRE.FindStringSubmatch(e.Message)
	if m == nil {
		return e
	}
	st, _ := strconv.Atoi(m[1])
	e.Code = tool.CodeHTTPError
	e.Status = st
	e.Retryable = st == 408 || st == 429 || st >= 500
	return e
}

// tooLarge is the error of an HTTP response body over the limit.
func (p *Provider) tooLarge() error {
	return tool.LimitError("MCP tool %s: the server sent a response larger than %s (%s: raises the limit)",
		p.cfg.Name, tool.Size(p.cfg.MaxResultBytes), tool.MaxResultOption)
}

// errNotSent marks a request that never reached the server, so it is safe to send again.
var errNotSent = errors.New("request not sent")

// do runs f on the live session. A request that provably never reached the server (the
// stdio server had just exited, or the HTTP session had expired) is sent once more on a
// fresh connection.
func (p *Provider) do(ctx context.Context, f func(*session) (json.RawMessage, error)) (json.RawMessage, error) {
	for attempt := 0; ; attempt++ {
		s, err := p.connection(ctx)
		if err != nil {
			return nil, err
		}
		out, err := f(s)
		if err == nil {
			return out, nil
		}
		if ctx.Err() != nil {
			// The caller gave up (a cancelled run, its own deadline): not this tool's failure.
			return nil, fmt.Errorf("MCP tool %s: %w", p.cfg.Name, ctx.Err())
		}
		retry := errors.Is(err, errNotSent) || (s.stdio == nil && errors.Is(err, transport.ErrSessionTerminated))
		if !retry || attempt > 0 {
			return nil, p.callError(s, err)
		}
		p.logger.Debug("reconnecting", "error", err)
		p.drop(s)
	}
}

// callError gives a failed request its code.
func (p *Provider) callError(s *session, err error) error {
	var te *tool.Error
	switch {
	case errors.As(err, &te):
		return te
	case errors.Is(err, context.DeadlineExceeded):
		return &tool.Error{Code: tool.CodeTimeout, Retryable: true, Err: err,
			Message: fmt.Sprintf("MCP tool %s: no answer within %v", p.cfg.Name, p.cfg.Timeout)}
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, errServerExited) && s.stdio != nil:
		return &tool.Error{Code: tool.CodeToolCrashed, Retryable: true, Err: err,
			Message: fmt.Sprintf("MCP tool %s: the server exited during the call%s", p.cfg.Name, s.stdio.exitText())}
	case errors.Is(err, mcp.ErrMethodNotFound):
		return &tool.Error{Code: tool.CodeUnknownMethod, Err: err, Message: fmt.Sprintf("MCP tool %s: %v", p.cfg.Name, err)}
	case errors.Is(err, mcp.ErrInvalidParams):
		return &tool.Error{Code: tool.CodeToolArgument, Err: err, Message: fmt.Sprintf("MCP tool %s: %v", p.cfg.Name, err)}
	}
	if e := unauthorized(p.cfg, err); e != nil {
		return e
	}
	e := &tool.Error{Code: tool.CodeToolError, Err: err, Message: fmt.Sprintf("MCP tool %s: %v", p.cfg.Name, err)}
	if s.stdio == nil {
		var rpc *rpcError
		if !errors.As(err, &rpc) {
			e.Retryable = true // a transport failure, not an answer
		}
		return httpError(e)
	}
	return e
}

// rpcError is a JSON-RPC error answer.
type rpcError struct{ d *mcp.JSONRPCErrorDetails }

func (e *rpcError) Error() string { return e.d.AsError().Error() }
func (e *rpcError) Unwrap() error { return e.d.AsError() }

// request sends one raw request on s. The client is kept for the handshake and for what the
// server asks of us; results are decoded here, once, straight from the wire JSON, which
// keeps tool schemas and structured content exactly as the server wrote them.
func (p *Provider) request(ctx context.Context, s *session, method string, params any) (json.RawMessage, error) {
	// String ids never collide with the client's own integer ids on the same connection.
	id := mcp.NewRequestId("halo-" + strconv.FormatInt(p.nextID.Add(1), 10))
	ctx, tooLarge := withLimitFlag(ctx)
	resp, err := s.tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: method, Params: params})
	if err != nil {
		if tooLarge.Load() {
			return nil, p.tooLarge()
		}
		return nil, err
	}
	if resp.Error != nil {
		return nil, &rpcError{resp.Error}
	}
	return resp.Result, nil
}

// notify routes progress notifications to the call that asked for them. It runs on the
// stdio transport's read loop, so it only queues: the call's own goroutine hands the report
// on (progressQueue).
func (p *Provider) notify(n mcp.JSONRPCNotification) {
	if n.Method != string(mcp.MethodNotificationProgress) {
		return
	}
	f := n.Params.AdditionalFields
	token := fmt.Sprint(f["progressToken"])
	p.progMu.Lock()
	q := p.progress[token]
	p.progMu.Unlock()
	if q == nil {
		return
	}
	var pr tool.Progress
	pr.Filled, _ = f["progress"].(float64)
	pr.Total, _ = f["total"].(float64)
	pr.Message, _ = f["message"].(string)
	q.put(pr)
}

// maxQueuedProgress bounds the reports a call keeps for a caller slower to take them than
// the server is to send them: past it, a new report replaces the newest queued one.
const maxQueuedProgress = 64

// A progressQueue carries one call's progress reports from the read loop (put, which never
// blocks) to the caller's handler, in order, on a goroutine the call owns.
type progressQueue struct {
	handler func(tool.Progress)
	wake    chan struct{} // capacity 1
	stop    chan struct{} // closed when the call has its answer
	done    chan struct{} // closed when every queued report was handed on

	mu    sync.Mutex
	items []tool.Progress
}

func newProgressQueue(h func(tool.Progress)) *progressQueue {
	q := &progressQueue{handler: h, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go q.run()
	return q
}

func (q *progressQueue) put(pr tool.Progress) {
	q.mu.Lock()
	if n := len(q.items); n >= maxQueuedProgress {
		q.items[n-1] = pr
	} else {
		q.items = append(q.items, pr)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *progressQueue) run() {
	defer close(q.done)
	for {
		stopping := false
		select {
		case <-q.wake:
		case <-q.stop:
			stopping = true
		}
		q.mu.Lock()
		items := q.items
		q.items = nil
		q.mu.Unlock()
		for _, pr := range items {
			q.handler(pr)
		}
		if stopping {
			return
		}
	}
}

// close hands on what is still queued (reports that came before the answer) and waits
// until the handler is done with them.
func (q *progressQueue) close() {
	close(q.stop)
	<-q.done
}

// Methods lists the built-in methods and the server's tools, read from the server now.
func (p *Provider) Methods(ctx context.Context) ([]tool.Method, error) {
	var hasResources bool
	var tools []rawTool
	_, err := p.do(ctx, func(s *session) (json.RawMessage, error) {
		ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
		defer cancel()
		var err error
		tools, err = p.listTools(ctx, s)
		hasResources = s.caps.Resources != nil
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	return methodsOf(tools, hasResources, p.logger), nil
}

// methodsOf builds the method list: the built-ins, then the server's tools except those
// named like a built-in (the built-in would run instead). Agents are offered list_resources
// and read_resource only when the server has resources, and never list_tools.
func methodsOf(tools []rawTool, hasResources bool, logger hclog.Logger) []tool.Method {
	ms := []tool.Method{
		{Name: ListTools, Description: "List the server's tools: name, description, inputSchema and annotations.",
			Params: json.RawMessage(`{"type":"object","properties":{}}`), Effect: tool.Read, PipelineOnly: true},
		{Name: ListResources, Description: "List the server's resources: uri, name, description and mimeType.",
			Params: json.RawMessage(`{"type":"object","properties":{}}`), Effect: tool.Read, PipelineOnly: !hasResources},
		{Name: ReadResource, Description: "Read one of the server's resources by its URI; JSON contents are parsed.",
			Params: json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string","description":"The resource's URI, as list_resources gives it"}},"required":["uri"]}`),
			Effect: tool.Read, PipelineOnly: !hasResources},
	}
	for _, t := range tools {
		if IsBuiltin(t.Name) {
			logger.Debug("a server tool is hidden by Halo's built-in method of the same name", "name", t.Name)
			continue
		}
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		params := t.InputSchema
		if len(params) == 0 || string(params) == "null" {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		ms = append(ms, tool.Method{Name: t.Name, Description: desc, Params: params, Effect: t.effect()})
	}
	return ms
}

// rawTool is one entry of tools/list, kept as the server wrote it.
type rawTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// effect classifies a tool by its annotations: readOnlyHint is read; destructiveHint or
// openWorldHint is external; anything else is write. These are the server's own claims.
func (t rawTool) effect() tool.Effect {
	var a struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
		OpenWorld   *bool `json:"openWorldHint"`
	}
	if len(t.Annotations) > 0 {
		_ = json.Unmarshal(t.Annotations, &a)
	}
	is := func(b *bool) bool { return b != nil && *b }
	switch {
	case is(a.ReadOnly):
		return tool.Read
	case is(a.Destructive), is(a.OpenWorld):
		return tool.External
	}
	return tool.Write
}

// maxPages bounds how many pages a list follows, so a server repeating cursors cannot hold
// a call forever.
const maxPages = 100

func (p *Provider) listTools(ctx context.Context, s *session) ([]rawTool, error) {
	var all []rawTool
	cursor := ""
	for range maxPages {
		var page struct {
			Tools      []rawTool `json:"tools"`
			NextCursor string    `json:"nextCursor"`
		}
		res, err := p.request(ctx, s, string(mcp.MethodToolsList), cursorParams(cursor))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, fmt.Errorf("the server's tools/list answer is not valid: %w", err)
		}
		all = append(all, page.Tools...)
		if page.NextCursor == "" || page.NextCursor == cursor {
			return all, nil
		}
		cursor = page.NextCursor
	}
	return all, nil
}

func cursorParams(cursor string) any {
	if cursor == "" {
		return map[string]any{}
	}
	return map[string]any{"cursor": cursor}
}

// Call runs a built-in method or the server's tool named req.Method. Its value, and the
// detail of a tool error, nest at most tool.MaxDepth deep.
func (p *Provider) Call(ctx context.Context, req tool.Request) (json.RawMessage, error) {
	out, err := p.call(ctx, req)
	who := "MCP tool " + p.cfg.Name + "." + req.Method
	if err == nil {
		if lerr := tool.CheckReply(who, out, 0); lerr != nil {
			return nil, lerr
		}
		return out, nil
	}
	var te *tool.Error
	if errors.As(err, &te) && len(te.Detail) > 0 {
		if lerr := tool.CheckReply(who, te.Detail, 0); lerr != nil {
			return nil, lerr
		}
	}
	return nil, err
}

func (p *Provider) call(ctx context.Context, req tool.Request) (json.RawMessage, error) {
	args := req.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	return p.do(ctx, func(s *session) (json.RawMessage, error) {
		ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
		defer cancel()
		switch req.Method {
		case ListTools:
			tools, err := p.listTools(ctx, s)
			if err != nil {
				return nil, err
			}
			if tools == nil {
				tools = []rawTool{}
			}
			return marshal(tools)
		case ListResources:
			return p.listResources(ctx, s)
		case ReadResource:
			return p.readResource(ctx, s, args)
		}
		out, err := p.callTool(ctx, s, req.Method, args, req.Progress)
		if err != nil && ctx.Err() == nil && errcode.Code(err) != tool.CodeLimit {
			if offered, unknown := p.unknownTool(ctx, s, req.Method); unknown {
				// Servers report an unknown tool in different ways (invalid params, method
				// not found, an error result); the caller gets one code for it, and the names.
				return nil, tool.Errorf(tool.CodeUnknownMethod, "MCP tool %s has no method %s; the server offers %s",
					p.cfg.Name, req.Method, offered)
			}
		}
		return out, err
	})
}

// unknownTool reports whether the server does not list a tool called name, and what it
// does offer. It is asked only after a call failed, so a working call costs no extra round
// trip.
func (p *Provider) unknownTool(ctx context.Context, s *session, name string) (string, bool) {
	tools, err := p.listTools(ctx, s)
	if err != nil {
		return "", false
	}
	names := []string{ListTools, ListResources, ReadResource}
	for _, t := range tools {
		if t.Name == name {
			return "", false
		}
		if !IsBuiltin(t.Name) {
			names = append(names, t.Name)
		}
	}
	return strings.Join(names, ", "), true
}

func (p *Provider) callTool(ctx context.Context, s *session, name string, args json.RawMessage, progress func(tool.Progress)) (json.RawMessage, error) {
	params := map[string]any{"name": name, "arguments": args}
	if progress != nil {
		token := "halo-progress-" + strconv.FormatInt(p.nextID.Add(1), 10)
		q := newProgressQueue(progress)
		p.progMu.Lock()
		p.progress[token] = q
		p.progMu.Unlock()
		defer func() {
			p.progMu.Lock()
			delete(p.progress, token)
			p.progMu.Unlock()
			q.close()
		}()
		params["_meta"] = map[string]any{"progressToken": token}
	}
	res, err := p.request(ctx, s, string(mcp.MethodToolsCall), params)
	if err != nil {
		return nil, err
	}
	return toolResult(name, res)
}

// toolResult maps a tools/call result to the call's value, or to a TOOL_ERROR when the
// server marked it isError.
func toolResult(name string, res json.RawMessage) (json.RawMessage, error) {
	// One decode of the whole result, straight into the content items: every further pass
	// over a large text costs as much as this one.
	var r struct {
		Content           []contentItem   `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("the server's answer to %s is not a tool result: %w", name, err)
	}
	var value json.RawMessage
	var err error
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		value = r.StructuredContent
	} else if value, err = contentValue(r.Content, func() []json.RawMessage { return rawContent(res) }); err != nil {
		return nil, fmt.Errorf("the server's answer to %s: %w", name, err)
	}
	if r.IsError {
		msg := errorText(r.Content)
		if msg == "" {
			msg = "the tool reported an error without a message"
		}
		// A tool error is the server's only way to say a call failed, whether for good
		// (a bad argument) or for now (an API it calls is down): @retry may try again.
		return nil, &tool.Error{Code: tool.CodeToolError, Message: msg, Detail: value, Retryable: true}
	}
	return value, nil
}

// rawContent returns a result's content items as the server wrote them, for the kinds this
// client passes on unchanged (a second decode, only for those).
func rawContent(res json.RawMessage) []json.RawMessage {
	var r struct {
		Content []json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(res, &r)
	return r.Content
}

// contentItem is the union of the content kinds a tool result holds. Text stays the JSON
// string literal the server wrote: a text that is not itself JSON is passed on as that
// literal, never unescaped and escaped again (the costly part of a large text result).
type contentItem struct {
	Type     string          `json:"type"`
	Text     json.RawMessage `json:"text,omitempty"`
	Data     string          `json:"data,omitempty"`
	MimeType string          `json:"mimeType,omitempty"`
	Resource json.RawMessage `json:"resource,omitempty"`
}

// mapped reports whether Halo maps this kind of item itself; other kinds (resource_link,
// kinds newer than this client) are passed on as the server wrote them.
func (it contentItem) mapped() bool {
	switch it.Type {
	case "text", "image", "audio", "resource":
		return true
	}
	return false
}

// contentValue maps a result's content: text (all text items joined with newlines) is
// parsed as JSON when it is JSON and is a string otherwise; an image or audio item is
// { type, mimeType, data }; several items of mixed kinds are a list of those values.
// raw returns the items as sent, needed only for kinds Halo does not map.
func contentValue(items []contentItem, raw func() []json.RawMessage) (json.RawMessage, error) {
	allText := true
	var raws []json.RawMessage
	for _, it := range items {
		if it.Type != "text" {
			allText = false
		}
		if !it.mapped() && raws == nil {
			raws = raw()
			if len(raws) != len(items) {
				return nil, fmt.Errorf("the result's content is not a list of items")
			}
		}
	}
	rawOf := func(i int) json.RawMessage {
		if raws == nil {
			return nil
		}
		return raws[i]
	}
	switch {
	case len(items) == 0:
		return json.RawMessage(`null`), nil
	case allText && len(items) > 1:
		texts := make([]string, len(items))
		for i, it := range items {
			t, err := unquote(it.Text)
			if err != nil {
				return nil, err
			}
			texts[i] = t
		}
		lit, err := marshal(strings.Join(texts, "\n"))
		if err != nil {
			return nil, err
		}
		return textValue(lit)
	case len(items) == 1:
		return itemValue(items[0], rawOf(0))
	}
	vals := make([]json.RawMessage, len(items))
	for i := range items {
		v, err := itemValue(items[i], rawOf(i))
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return marshal(vals)
}

func unquote(lit json.RawMessage) (string, error) {
	if len(lit) == 0 {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return "", fmt.Errorf("text content is not a string: %w", err)
	}
	return s, nil
}

// textValue takes a text as its JSON string literal and returns the JSON document the text
// holds when it holds one, else the literal itself (a JSON string).
func textValue(lit json.RawMessage) (json.RawMessage, error) {
	if len(lit) == 0 {
		return json.RawMessage(`""`), nil
	}
	// Servers written with encoding/json escape <, > and & as \u003c...; such a literal is
	// decoded and encoded again so results read the same whichever server sent them.
	htmlEscaped := bytes.Contains(lit, []byte(`\u00`))
	if !mayBeJSON(lit) && !htmlEscaped {
		return lit, nil
	}
	s, err := unquote(lit)
	if err != nil {
		return nil, err
	}
	if t := strings.TrimSpace(s); t != "" && json.Valid([]byte(t)) {
		return json.RawMessage(t), nil
	}
	if htmlEscaped {
		return marshal(s)
	}
	return lit, nil
}

// mayBeJSON looks at the first character of the text a string literal holds: a JSON
// document starts with one of {["-0123456789tfn after white space. Most texts that are
// not JSON are told apart here without unescaping them.
func mayBeJSON(lit json.RawMessage) bool {
	b := lit
	if len(b) < 2 || b[0] != '"' {
		return true // not a plain literal; let unquote decide
	}
	b = b[1:]
	for len(b) > 0 {
		switch {
		case b[0] == ' ':
			b = b[1:]
		case b[0] == '\\' && len(b) > 1 && (b[1] == 'n' || b[1] == 't' || b[1] == 'r'):
			b = b[2:]
		case b[0] == '\\':
			return true // some other escape: unescape to be sure
		default:
			return strings.IndexByte(`{["-0123456789tfn`, b[0]) >= 0
		}
	}
	return false
}

// marshal encodes v as JSON without escaping <, > and &: results are data, not HTML.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func itemValue(it contentItem, raw json.RawMessage) (json.RawMessage, error) {
	switch it.Type {
	case "text":
		return textValue(it.Text)
	case "image", "audio":
		return marshal(struct {
			Type     string `json:"type"`
			MimeType string `json:"mimeType"`
			Data     string `json:"data"`
		}{it.Type, it.MimeType, it.Data})
	case "resource":
		var rc resourceContents
		if err := json.Unmarshal(it.Resource, &rc); err != nil {
			return nil, fmt.Errorf("embedded resource: %w", err)
		}
		return marshal(struct {
			Type string `json:"type"`
			resourceContents
		}{"resource", rc})
	}
	// resource_link and kinds newer than this client: as the server sent them.
	return raw, nil
}

// errorText is the message of an isError result: its text items.
func errorText(items []contentItem) string {
	var parts []string
	for _, it := range items {
		if it.Type != "text" {
			continue
		}
		if t, err := unquote(it.Text); err == nil && strings.TrimSpace(t) != "" {
			parts = append(parts, strings.TrimSpace(t))
		}
	}
	return strings.Join(parts, "\n")
}

type resourceContents struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
}

func (p *Provider) listResources(ctx context.Context, s *session) (json.RawMessage, error) {
	if s.caps.Resources == nil {
		return json.RawMessage(`[]`), nil
	}
	all := []json.RawMessage{}
	cursor := ""
	for range maxPages {
		var page struct {
			Resources  []json.RawMessage `json:"resources"`
			NextCursor string            `json:"nextCursor"`
		}
		res, err := p.request(ctx, s, string(mcp.MethodResourcesList), cursorParams(cursor))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, fmt.Errorf("the server's resources/list answer is not valid: %w", err)
		}
		all = append(all, page.Resources...)
		if page.NextCursor == "" || page.NextCursor == cursor {
			break
		}
		cursor = page.NextCursor
	}
	return marshal(all)
}

// readResource reads one resource. One text content is its text, parsed when it is JSON;
// a binary one is { uri, mimeType, blob }; several are a list of those values.
func (p *Provider) readResource(ctx context.Context, s *session, args json.RawMessage) (json.RawMessage, error) {
	var a struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.URI == "" {
		return nil, tool.Errorf(tool.CodeToolArgument, "read_resource needs uri: the URI of a resource, as list_resources gives it")
	}
	res, err := p.request(ctx, s, string(mcp.MethodResourcesRead), map[string]any{"uri": a.URI})
	if err != nil {
		return nil, err
	}
	var r struct {
		Contents []resourceContents `json:"contents"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("the server's resources/read answer is not valid: %w", err)
	}
	vals := make([]json.RawMessage, 0, len(r.Contents))
	for _, c := range r.Contents {
		var v json.RawMessage
		if c.Text != nil {
			var lit json.RawMessage
			if lit, err = marshal(*c.Text); err == nil {
				v, err = textValue(lit)
			}
		} else {
			v, err = marshal(c)
		}
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
	switch len(vals) {
	case 0:
		return json.RawMessage(`null`), nil
	case 1:
		return vals[0], nil
	}
	return marshal(vals)
}
