// Package httppkg turns the http provider of a tool package's manifest into a tool.Provider:
// every request is built by the host from the manifest's data (base URL, auth, body style,
// fixed headers, method paths), so no package code runs. The HTTP client is handed in.
package httppkg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/pkgmgr"
)

// Type returns the provider type for one http provider of an installed package.
func Type(pkgName, name string, spec *pkgmgr.Provider, client *http.Client) tool.Type {
	return tool.Type{
		Name:        name,
		Description: spec.Description,
		Kind:        tool.KindHTTP,
		Package:     pkgName,
		Methods:     Methods(spec),
		Open: func(ctx context.Context, d tool.Declaration) (tool.Provider, error) {
			return Open(spec, d, client)
		},
	}
}

// Methods describes an http provider's methods. A method without params takes its path's
// {name} parameters, required, and any other argument.
func Methods(spec *pkgmgr.Provider) []tool.Method {
	out := make([]tool.Method, 0, len(spec.Methods))
	for _, m := range spec.Methods {
		params := m.Params
		if len(params) == 0 {
			params = defaultParams(pkgmgr.PathParams(m.HTTP.Path))
		}
		effect := tool.Effect(m.Effect)
		if !effect.Valid() {
			effect = tool.External
		}
		out = append(out, tool.Method{Name: m.Name, Description: m.Description, Params: params, Effect: effect})
	}
	return out
}

func defaultParams(names []string) json.RawMessage {
	props := map[string]any{}
	for _, n := range names {
		props[n] = map[string]any{"type": "string"}
	}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": true}
	if len(names) > 0 {
		schema["required"] = names
	}
	b, _ := json.Marshal(schema)
	return b
}

// A Provider is one declaration of an http package's provider.
type Provider struct {
	tool    string
	spec    *pkgmgr.Provider
	base    *url.URL
	client  *http.Client
	key     string
	user    string
	methods []tool.Method
	// maxBytes bounds a reply's body (max_result_bytes:, 16 MiB by default).
	maxBytes int
}

var reTemplateValue = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
var reTemplate = regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}`)

// Open configures the provider for one declaration: {{name}} parts of the base URL come from
// the declaration's named arguments (letters, digits, '.', '-', '_' only), the key from
// apiKey: or the first positional argument, else the manifest's auth.env variable; for basic
// auth the user from user: or the first variable and the password from apiKey: or the second.
func Open(spec *pkgmgr.Provider, d tool.Declaration, client *http.Client) (*Provider, error) {
	if client == nil {
		return nil, fmt.Errorf("httppkg: no HTTP client")
	}
	templates := map[string]bool{}
	for _, t := range pkgmgr.Templates(spec.BaseURL) {
		templates[t] = true
	}
	for k := range d.Named {
		if k != "apiKey" && k != "user" && k != tool.MaxResultOption && !templates[k] {
			return nil, tool.Errorf(tool.CodeToolConfig, "%s: unknown option %s: (this provider takes %s)", d.Provider, k, strings.Join(options(templates), ", "))
		}
	}
	if len(d.Args) > 1 {
		return nil, tool.Errorf(tool.CodeToolConfig, "%s takes at most one positional argument, the key", d.Provider)
	}
	var missing []string
	base := reTemplate.ReplaceAllStringFunc(spec.BaseURL, func(m string) string {
		name := m[2 : len(m)-2]
		v, ok := d.Named[name].(string)
		if !ok || v == "" {
			missing = append(missing, name)
			return m
		}
		if !reTemplateValue.MatchString(v) {
			missing = append(missing, name+" (letters, digits, '.', '-' and '_' only)")
			return m
		}
		return v
	})
	if len(missing) > 0 {
		return nil, tool.Errorf(tool.CodeToolConfig, "%s needs %s: in its declaration, e.g. %s(%s: \"...\")", d.Provider, strings.Join(missing, ", "), d.Provider, strings.SplitN(missing[0], " ", 2)[0])
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil, tool.Errorf(tool.CodeToolConfig, "%s: base URL %q is not valid", d.Provider, base)
	}
	maxBytes, err := tool.MaxResultBytesOf(d.Named)
	if err != nil {
		return nil, tool.Errorf(tool.CodeToolConfig, "%s: %v", d.Provider, err)
	}
	p := &Provider{tool: d.Name, spec: spec, base: u, methods: Methods(spec), maxBytes: maxBytes}
	// The provider's own copy of the client: the same transport, with its redirect rule.
	c := *client
	c.CheckRedirect = p.checkRedirect
	p.client = &c
	if p.tool == "" {
		p.tool = d.Provider
	}
	getenv := func(k string) string {
		if d.Getenv == nil {
			return ""
		}
		v, _ := d.Getenv(k)
		return v
	}
	key, _ := d.Named["apiKey"].(string)
	if key == "" {
		key, _ = d.Arg(0).(string)
	}
	authType, env := "none", pkgmgr.EnvNames(nil)
	if spec.Auth != nil {
		authType, env = spec.Auth.Type, spec.Auth.Env
	}
	switch authType {
	case "none":
	case "basic":
		p.user, _ = d.Named["user"].(string)
		if p.user == "" && len(env) > 0 {
			p.user = getenv(env[0])
		}
		if key == "" && len(env) > 1 {
			key = getenv(env[1])
		}
		if p.user == "" || key == "" {
			return nil, tool.Errorf(tool.CodeToolConfig, "%s needs a user and a password: set %s or pass user: and apiKey:", d.Provider, strings.Join(env, " and "))
		}
	default:
		if key == "" && len(env) > 0 {
			key = getenv(env[0])
		}
		if key == "" {
			return nil, tool.Errorf(tool.CodeToolConfig, "%s needs a key: set %s or pass apiKey:", d.Provider, strings.Join(env, " or "))
		}
	}
	p.key = key
	return p, nil
}

func options(templates map[string]bool) []string {
	out := []string{"apiKey", tool.MaxResultOption}
	for t := range templates {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Methods implements tool.Provider.
func (p *Provider) Methods(context.Context) ([]tool.Method, error) { return p.methods, nil }

// Close implements tool.Provider; there is nothing to release.
func (p *Provider) Close() error { return nil }

// Call builds the request for one method, sends it, and returns the parsed reply.
func (p *Provider) Call(ctx context.Context, req tool.Request) (json.RawMessage, error) {
	var m *pkgmgr.HTTPMethod
	for i := range p.spec.Methods {
		if p.spec.Methods[i].Name == req.Method {
			m = &p.spec.Methods[i]
		}
	}
	if m == nil {
		return nil, tool.Errorf(tool.CodeUnknownMethod, "%s has no method %s", p.tool, req.Method)
	}
	label := p.tool + "." + m.Name
	args := map[string]any{}
	if len(bytes.TrimSpace(req.Args)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(req.Args))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return nil, tool.Errorf(tool.CodeToolArgument, "%s: the arguments must be a JSON object: %v", label, err)
		}
		if args == nil {
			args = map[string]any{}
		}
	}
	hreq, err := p.build(ctx, label, m, args)
	if err != nil {
		return nil, err
	}
	resp, err := p.client.Do(hreq)
	if err != nil {
		var refused *redirectError
		if errors.As(err, &refused) {
			return nil, &tool.Error{Code: tool.CodeToolError, Message: fmt.Sprintf("%s: %s %s: %v", label, hreq.Method, redact(hreq.URL), refused), Err: refused}
		}
		if ctx.Err() != nil {
			return nil, &tool.Error{Code: tool.CodeTimeout, Message: label + ": " + ctx.Err().Error(), Err: ctx.Err(), Retryable: errors.Is(ctx.Err(), context.DeadlineExceeded)}
		}
		return nil, &tool.Error{Code: tool.CodeToolError, Message: fmt.Sprintf("%s: %s %s: %v", label, hreq.Method, redact(hreq.URL), unwrapURLError(err)), Err: err, Retryable: true}
	}
	defer resp.Body.Close()
	// Read one byte past the limit, never more: the reply comes from a service Halo does not
	// control.
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(p.maxBytes)+1))
	if err != nil {
		return nil, &tool.Error{Code: tool.CodeToolError, Message: label + ": reading the reply: " + err.Error(), Err: err, Retryable: true}
	}
	if len(body) > p.maxBytes {
		return nil, tool.LimitError("%s: the reply is over the limit of %s (%s: raises it)", label, tool.Size(p.maxBytes), tool.MaxResultOption)
	}
	trimmed := bytes.TrimSpace(body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, httpError(label, resp, trimmed)
	}
	if len(trimmed) == 0 {
		return json.Marshal(map[string]any{"ok": true, "status": resp.StatusCode})
	}
	if json.Valid(trimmed) {
		if err := tool.CheckReply(label, trimmed, 0); err != nil {
			return nil, err
		}
		return json.RawMessage(trimmed), nil
	}
	return json.Marshal(string(trimmed))
}

// under reports whether u is the base URL or below it, with the same scheme and host.
func (p *Provider) under(u *url.URL) bool {
	clean := path.Clean("/" + u.Path)
	baseClean := path.Clean("/" + p.base.Path)
	return u.Scheme == p.base.Scheme && u.Host == p.base.Host &&
		(clean == baseClean || strings.HasPrefix(clean, strings.TrimSuffix(baseClean, "/")+"/"))
}

// maxRedirects bounds the redirects of one call, as net/http's default does.
const maxRedirects = 10

// checkRedirect follows a redirect only when it stays under the base URL, with the same
// scheme: otherwise the key would go with it (net/http forwards custom headers to any host,
// and a query-string key is in the Location the server chose or in the Referer). No hop
// sends a Referer, which would carry the previous URL's query (a query key) along.
func (p *Provider) checkRedirect(req *http.Request, via []*http.Request) error {
	req.Header.Del("Referer")
	if len(via) >= maxRedirects {
		return &redirectError{msg: fmt.Sprintf("stopped after %d redirects", maxRedirects)}
	}
	if !p.under(req.URL) {
		return &redirectError{msg: fmt.Sprintf("the server redirected to %s, which is not under %s; Halo does not follow it, so the key is not sent there", redact(req.URL), p.base)}
	}
	return nil
}

// A redirectError is a redirect the provider refused to follow.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redact drops the query, which can hold a key (auth type query), and any user info.
func redact(u *url.URL) string {
	c := *u
	c.RawQuery, c.User = "", nil
	return c.String()
}

func httpError(label string, resp *http.Response, body []byte) error {
	status := resp.StatusCode
	e := &tool.Error{
		Code:      tool.CodeHTTPError,
		Status:    status,
		Retryable: status == 408 || status == 429 || status >= 500,
	}
	excerpt := string(body)
	if len(excerpt) > 500 {
		excerpt = excerpt[:500] + "…"
	}
	e.Message = fmt.Sprintf("%s: HTTP %s", label, resp.Status)
	if excerpt != "" {
		e.Message += ": " + excerpt
	}
	if json.Valid(body) && len(body) > 0 {
		e.Detail = json.RawMessage(body)
	} else if len(body) > 0 {
		e.Detail, _ = json.Marshal(excerpt)
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if secs, err := strconv.Atoi(ra); err == nil && secs >= 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		} else if t, err := http.ParseTime(ra); err == nil {
			if d := time.Until(t); d > 0 {
				e.RetryAfter = d
			}
		}
	}
	return e
}

// build makes the request: {name} path segments from the arguments, URL-encoded and not
// sent again; the rest as the query (GET, DELETE) or the body (json or form).
func (p *Provider) build(ctx context.Context, label string, m *pkgmgr.HTTPMethod, args map[string]any) (*http.Request, error) {
	segs := strings.Split(m.HTTP.Path, "/")
	for i, seg := range segs {
		if !strings.HasPrefix(seg, "{") || !strings.HasSuffix(seg, "}") {
			continue
		}
		name := seg[1 : len(seg)-1]
		v, ok := args[name]
		if !ok || v == nil {
			return nil, tool.Errorf(tool.CodeToolArgument, "%s: missing argument %s (the {%s} part of %s)", label, name, name, m.HTTP.Path)
		}
		s, ok := scalar(v)
		if !ok {
			return nil, tool.Errorf(tool.CodeToolArgument, "%s: argument %s must be a string or a number, got %T", label, name, v)
		}
		if s == "" || s == "." || s == ".." {
			return nil, tool.Errorf(tool.CodeToolArgument, "%s: argument %s: %q is not a path value", label, name, s)
		}
		segs[i] = url.PathEscape(s)
		delete(args, name)
	}
	basePath := strings.TrimSuffix(p.base.EscapedPath(), "/")
	u, err := url.Parse(p.base.Scheme + "://" + p.base.Host + basePath + strings.Join(segs, "/"))
	if err != nil {
		return nil, tool.Errorf(tool.CodeToolArgument, "%s: bad URL: %v", label, err)
	}
	// However the arguments were written, the request stays under the base URL.
	if !p.under(u) {
		return nil, tool.Errorf(tool.CodeToolArgument, "%s: the request would leave %s", label, p.base)
	}
	query := url.Values{}
	var body io.Reader
	contentType := ""
	switch m.HTTP.Method {
	case http.MethodGet, http.MethodDelete:
		encodeForm(query, "", args)
	default:
		if p.spec.Body == "form" {
			form := url.Values{}
			encodeForm(form, "", args)
			body = strings.NewReader(form.Encode())
			contentType = "application/x-www-form-urlencoded"
		} else {
			b, err := json.Marshal(args)
			if err != nil {
				return nil, tool.Errorf(tool.CodeToolArgument, "%s: %v", label, err)
			}
			body = bytes.NewReader(b)
			contentType = "application/json"
		}
	}
	if p.spec.Auth != nil && p.spec.Auth.Type == "query" {
		query.Set(p.spec.Auth.Name, p.key)
	}
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, m.HTTP.Method, u.String(), body)
	if err != nil {
		return nil, tool.Errorf(tool.CodeToolArgument, "%s: %v", label, err)
	}
	for k, v := range p.spec.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "halo")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if p.spec.Auth != nil {
		switch p.spec.Auth.Type {
		case "bearer":
			req.Header.Set("Authorization", "Bearer "+p.key)
		case "header":
			req.Header.Set(p.spec.Auth.Name, p.key)
		case "basic":
			req.SetBasicAuth(p.user, p.key)
		}
	}
	return req, nil
}

func scalar(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case json.Number:
		return t.String(), true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(t), true
	}
	return "", false
}

// encodeForm adds v to vals the way Stripe reads nested form bodies: objects as a[b]=1,
// lists as a[0]=x, null as an empty value.
func encodeForm(vals url.Values, prefix string, v any) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			name := k
			if prefix != "" {
				name = prefix + "[" + k + "]"
			}
			encodeForm(vals, name, t[k])
		}
	case []any:
		for i, e := range t {
			encodeForm(vals, prefix+"["+strconv.Itoa(i)+"]", e)
		}
	case nil:
		vals.Add(prefix, "")
	default:
		s, _ := scalar(t)
		vals.Add(prefix, s)
	}
}
