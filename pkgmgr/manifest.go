package pkgmgr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// ManifestFile is the manifest's file name in a package folder.
const ManifestFile = "halo-tool.json"

// Provider kinds.
const (
	KindHTTP   = "http"
	KindMCP    = "mcp"
	KindModule = "module"
)

// A Manifest is a parsed, valid halo-tool.json.
type Manifest struct {
	Name        string               `json:"name"`
	Version     string               `json:"version"`
	Description string               `json:"description"`
	Publisher   string               `json:"publisher,omitempty"`
	Homepage    string               `json:"homepage,omitempty"`
	License     string               `json:"license,omitempty"`
	Providers   map[string]*Provider `json:"providers"`
	// Files are the files and folders of the package folder that halo pack packs beside the
	// manifest and the module executables (a README, an mcp server's script, data a plugin
	// reads); nothing else of the folder is packed.
	Files []string `json:"files,omitempty"`
}

// A Provider is one entry of a manifest's providers: the name declarations use, and what
// serves it. Which fields apply depends on Kind.
type Provider struct {
	Kind        string `json:"kind"`
	Description string `json:"description"`

	// http: requests are built from these; no package code runs.
	BaseURL string            `json:"baseUrl,omitempty"`
	Auth    *Auth             `json:"auth,omitempty"`
	Body    string            `json:"body,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Methods []HTTPMethod      `json:"methods,omitempty"`

	// mcp: exactly one of Command (a stdio server) and URL (Streamable HTTP).
	Command string `json:"command,omitempty"`
	URL     string `json:"url,omitempty"`

	// Env lists the variables an mcp command or a module's plugin may see.
	Env []string `json:"env,omitempty"`

	// module: the plugin executable for each platform ("linux/amd64": "bin/linux-amd64/x"),
	// and optionally how halo pack builds them.
	Executables map[string]string `json:"executables,omitempty"`
	Build       *Build            `json:"build,omitempty"`
	// Network lists the hosts a module's plugin connects to. A module that lists none runs
	// with its network cut where the sandbox can cut it (Linux with Landlock ABI 4+); the
	// sandbox cannot tell hosts apart, so listing any host opens the network.
	Network []string `json:"network,omitempty"`
}

// Auth says how an http package sends its key.
type Auth struct {
	// Type is bearer, header, query, basic or none.
	Type string `json:"type"`
	// Env names the variable holding the key; for basic, the user's and the password's.
	Env EnvNames `json:"env,omitempty"`
	// Name is the header or query parameter, for header and query.
	Name string `json:"name,omitempty"`
}

// EnvNames is auth.env: one variable name, or a list of them (basic auth takes two).
type EnvNames []string

// UnmarshalJSON reads a string or a list of strings.
func (e *EnvNames) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*e = EnvNames{one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*e = list
	return nil
}

// MarshalJSON writes one name as a string, several as a list.
func (e EnvNames) MarshalJSON() ([]byte, error) {
	if len(e) == 1 {
		return json.Marshal(e[0])
	}
	return json.Marshal([]string(e))
}

// An HTTPMethod is one method of an http provider.
type HTTPMethod struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Effect      string          `json:"effect,omitempty"`
	HTTP        HTTPCall        `json:"http"`
	Params      json.RawMessage `json:"params,omitempty"`
}

// An HTTPCall is a method's request line.
type HTTPCall struct {
	Method string `json:"method"`
	Path   string `json:"path"`
}

// Build says how halo pack builds a module's executables.
type Build struct {
	// Go is the Go main package, as `go build` takes it from the package folder
	// ("./cmd/acme" or an import path).
	Go string `json:"go"`
}

// Platforms a module can name; they are the GOOS/GOARCH pairs `go build` makes without cgo.
var platforms = map[string]bool{
	"linux/amd64": true, "linux/arm64": true, "darwin/amd64": true, "darwin/arm64": true,
	"windows/amd64": true, "windows/arm64": true, "freebsd/amd64": true,
}

var (
	reName    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`) })
	reVersion = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	})
	reProvider  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`) })
	reMethod    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`) })
	reEnv       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	reTemplate  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{([^{}]*)\}\}`) })
	reIdent     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	reHeader    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") })
	rePathParam = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([^{}/]*)\}`) })
)

// ParseManifest checks a halo-tool.json against every rule and returns it, or a
// PACKAGE_INVALID error listing every problem with its JSON path.
func ParseManifest(data []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, &Error{Code: CodeInvalid, Message: "halo-tool.json is not valid JSON", Err: err}
	}
	if dec.More() {
		return nil, errorf(CodeInvalid, "halo-tool.json holds more than one JSON value")
	}
	var v validator
	v.manifest(tree)
	if len(v.problems) > 0 {
		return nil, &Error{Code: CodeInvalid, Message: fmt.Sprintf("halo-tool.json has %d problem(s)", len(v.problems)), Problems: v.problems}
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, &Error{Code: CodeInvalid, Message: "halo-tool.json", Err: err}
	}
	return &m, nil
}

// ProviderNames returns the manifest's provider names, sorted.
func (m *Manifest) ProviderNames() []string {
	names := make([]string, 0, len(m.Providers))
	for n := range m.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PathParams returns the {name} parameters of an http path, in order.
func PathParams(p string) []string {
	var out []string
	for _, m := range rePathParam().FindAllStringSubmatch(p, -1) {
		out = append(out, m[1])
	}
	return out
}

// Templates returns the {{name}} parts of an http base URL, in order, without repeats.
func Templates(baseURL string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range reTemplate().FindAllStringSubmatch(baseURL, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

type validator struct{ problems []Problem }

func (v *validator) add(p, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: p, Message: fmt.Sprintf(format, args...)})
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	if reIdent().MatchString(key) {
		return parent + "." + key
	}
	b, _ := json.Marshal(key)
	return parent + "[" + string(b) + "]"
}

func index(parent string, i int) string { return fmt.Sprintf("%s[%d]", parent, i) }

// object checks that x is an object with only the allowed keys.
func (v *validator) object(p string, x any, allowed ...string) (map[string]any, bool) {
	obj, ok := x.(map[string]any)
	if !ok {
		v.add(p, "want an object, got %s", typeName(x))
		return nil, false
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		found := false
		for _, a := range allowed {
			if a == k {
				found = true
				break
			}
		}
		if !found {
			v.add(join(p, k), "unknown field")
		}
	}
	return obj, true
}

// str returns obj[key] as a string; a missing required one, or one of another type, is a problem.
func (v *validator) str(p string, obj map[string]any, key string, required bool) (string, bool) {
	x, ok := obj[key]
	if !ok {
		if required {
			v.add(join(p, key), "required")
		}
		return "", false
	}
	s, ok := x.(string)
	if !ok {
		v.add(join(p, key), "want a string, got %s", typeName(x))
		return "", false
	}
	if required && strings.TrimSpace(s) == "" {
		v.add(join(p, key), "must not be empty")
		return "", false
	}
	return s, true
}

func typeName(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", x)
}

func (v *validator) manifest(tree any) {
	obj, ok := v.object("", tree, "name", "version", "description", "publisher", "homepage", "license", "providers", "files")
	if !ok {
		return
	}
	v.files(obj)
	if s, ok := v.str("", obj, "name", true); ok && !reName().MatchString(s) {
		v.add("name", "%q: use lowercase letters, digits and dashes, starting with a letter or digit, at most 63 characters", s)
	}
	if s, ok := v.str("", obj, "version", true); ok && !reVersion().MatchString(s) {
		v.add("version", "%q: want a version like 1.2.3 or 1.2.3-beta.1", s)
	}
	v.str("", obj, "description", true)
	v.str("", obj, "publisher", false)
	v.str("", obj, "license", false)
	if s, ok := v.str("", obj, "homepage", false); ok && s != "" {
		if u, err := url.Parse(s); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			v.add("homepage", "%q: want an http(s) URL", s)
		}
	}
	px, ok := obj["providers"]
	if !ok {
		v.add("providers", "required: at least one provider")
		return
	}
	providers, ok := px.(map[string]any)
	if !ok {
		v.add("providers", "want an object, got %s", typeName(px))
		return
	}
	if len(providers) == 0 {
		v.add("providers", "at least one provider is required")
	}
	names := make([]string, 0, len(providers))
	for n := range providers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := join("providers", n)
		if !reProvider().MatchString(n) {
			v.add(p, "provider name %q: a capital letter, then letters and digits", n)
		}
		v.provider(p, providers[n])
	}
}

var kindFields = map[string][]string{
	KindHTTP:   {"kind", "description", "baseUrl", "auth", "body", "headers", "methods"},
	KindMCP:    {"kind", "description", "command", "url", "env"},
	KindModule: {"kind", "description", "executables", "env", "build", "network"},
}

func (v *validator) provider(p string, x any) {
	raw, ok := x.(map[string]any)
	if !ok {
		v.add(p, "want an object, got %s", typeName(x))
		return
	}
	kind, ok := v.str(p, raw, "kind", true)
	if !ok {
		return
	}
	fields, known := kindFields[kind]
	if !known {
		v.add(join(p, "kind"), "%q: want http, mcp or module", kind)
		return
	}
	obj, _ := v.object(p, raw, fields...)
	v.str(p, obj, "description", true)
	switch kind {
	case KindHTTP:
		v.httpProvider(p, obj)
	case KindMCP:
		v.mcpProvider(p, obj)
	case KindModule:
		v.moduleProvider(p, obj)
	}
}

// checkURL checks an http package's or mcp server's URL: https, or http on localhost.
func (v *validator) checkURL(p, s string) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		v.add(p, "%q is not an absolute URL", s)
		return
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !IsLoopback(u.Hostname()) {
			v.add(p, "%q: plain http:// is allowed only on localhost; use https://", s)
		}
	default:
		v.add(p, "%q: want https://", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#") {
		v.add(p, "%q: no query or fragment", s)
	}
	if u.User != nil {
		v.add(p, "%q: no user or password in the URL", s)
	}
}

// IsLoopback reports whether host names this machine: localhost, 127.0.0.0/8 or ::1.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (v *validator) httpProvider(p string, obj map[string]any) {
	if base, ok := v.str(p, obj, "baseUrl", true); ok {
		bp := join(p, "baseUrl")
		for _, name := range Templates(base) {
			if !reIdent().MatchString(name) {
				v.add(bp, "{{%s}}: a template name is letters, digits and _", name)
			}
		}
		if strings.Count(base, "{{") != strings.Count(base, "}}") || strings.Count(base, "{{") != len(reTemplate().FindAllString(base, -1)) {
			v.add(bp, "unbalanced {{ }} in %q", base)
		}
		filled := reTemplate().ReplaceAllString(base, "x")
		if strings.ContainsAny(filled, "{}") {
			v.add(bp, "stray { or } in %q", base)
		}
		v.checkURL(bp, filled)
	}
	authType := "none"
	if ax, ok := obj["auth"]; ok {
		ap := join(p, "auth")
		if auth, ok := v.object(ap, ax, "type", "env", "name"); ok {
			if t, ok := v.str(ap, auth, "type", true); ok {
				authType = t
				switch t {
				case "bearer", "header", "query", "basic", "none":
				default:
					v.add(join(ap, "type"), "%q: want bearer, header, query, basic or none", t)
				}
			}
			env := v.envNames(join(ap, "env"), auth["env"])
			_, hasEnv := auth["env"]
			name, hasName := v.str(ap, auth, "name", false)
			switch authType {
			case "basic":
				if hasEnv && len(env) != 2 {
					v.add(join(ap, "env"), "basic auth takes two variables: [\"USER_VAR\", \"PASSWORD_VAR\"]")
				}
			case "bearer", "header", "query":
				if hasEnv && len(env) != 1 {
					v.add(join(ap, "env"), "%s auth takes one variable", authType)
				}
			case "none":
				if hasEnv {
					v.add(join(ap, "env"), "auth type none reads no variable")
				}
			}
			switch authType {
			case "header", "query":
				if !hasName || name == "" {
					v.add(join(ap, "name"), "required for %s auth: the %s name", authType, authType)
				} else if !reHeader().MatchString(name) {
					v.add(join(ap, "name"), "%q is not a valid name", name)
				}
			default:
				if hasName {
					v.add(join(ap, "name"), "only header and query auth take a name")
				}
			}
		}
	}
	if b, ok := v.str(p, obj, "body", false); ok && b != "json" && b != "form" {
		v.add(join(p, "body"), "%q: want json or form", b)
	}
	if hx, ok := obj["headers"]; ok {
		hp := join(p, "headers")
		if h, ok := hx.(map[string]any); !ok {
			v.add(hp, "want an object of strings, got %s", typeName(hx))
		} else {
			for k, val := range h {
				if !reHeader().MatchString(k) {
					v.add(join(hp, k), "%q is not a valid header name", k)
				}
				if s, ok := val.(string); !ok {
					v.add(join(hp, k), "want a string, got %s", typeName(val))
				} else if strings.ContainsAny(s, "\r\n") {
					v.add(join(hp, k), "a header value cannot hold a line break")
				}
			}
		}
	}
	mx, ok := obj["methods"]
	mp := join(p, "methods")
	if !ok {
		v.add(mp, "required: at least one method")
		return
	}
	methods, ok := mx.([]any)
	if !ok {
		v.add(mp, "want a list, got %s", typeName(mx))
		return
	}
	if len(methods) == 0 {
		v.add(mp, "at least one method is required")
	}
	seen := map[string]bool{}
	for i, x := range methods {
		ip := index(mp, i)
		m, ok := v.object(ip, x, "name", "description", "effect", "http", "params")
		if !ok {
			continue
		}
		if n, ok := v.str(ip, m, "name", true); ok {
			if !reMethod().MatchString(n) {
				v.add(join(ip, "name"), "%q: use lowercase snake_case", n)
			}
			if seen[n] {
				v.add(join(ip, "name"), "%q is defined twice", n)
			}
			seen[n] = true
		}
		v.str(ip, m, "description", true)
		effect, hasEffect := v.str(ip, m, "effect", false)
		if hasEffect && effect != "read" && effect != "write" && effect != "external" {
			v.add(join(ip, "effect"), "%q: want read, write or external", effect)
		}
		var params []string
		hx, ok := m["http"]
		hp := join(ip, "http")
		if !ok {
			v.add(hp, "required")
		} else if h, ok := v.object(hp, hx, "method", "path"); ok {
			if verb, ok := v.str(hp, h, "method", true); ok {
				switch verb {
				case "GET":
					if effect != "read" {
						v.add(join(ip, "effect"), "a GET method must be read")
					}
				case "POST", "PUT", "PATCH", "DELETE":
				default:
					v.add(join(hp, "method"), "%q: want GET, POST, PUT, PATCH or DELETE", verb)
				}
			}
			if pth, ok := v.str(hp, h, "path", true); ok {
				params = v.httpPath(join(hp, "path"), pth)
			}
		}
		if px, ok := m["params"]; ok {
			v.params(join(ip, "params"), px, params)
		}
	}
}

func (v *validator) httpPath(p, s string) []string {
	if !strings.HasPrefix(s, "/") {
		v.add(p, "%q must start with /", s)
	}
	if strings.ContainsAny(s, "?#") {
		v.add(p, "%q: no ? or # (arguments become the query)", s)
	}
	if strings.Contains(s, "..") {
		v.add(p, "%q: no ..", s)
	}
	if strings.ContainsAny(s, " \t\r\n\\") {
		v.add(p, "%q: no spaces or backslashes", s)
	}
	var params []string
	seen := map[string]bool{}
	for _, seg := range strings.Split(s, "/") {
		if !strings.ContainsAny(seg, "{}") {
			continue
		}
		m := rePathParam().FindAllStringSubmatch(seg, -1)
		if len(m) != 1 || "{"+m[0][1]+"}" != seg {
			v.add(p, "%q: a {name} parameter must be a whole path segment", s)
			continue
		}
		name := m[0][1]
		if !reIdent().MatchString(name) {
			v.add(p, "{%s}: a parameter name is letters, digits and _", name)
			continue
		}
		if seen[name] {
			v.add(p, "{%s} appears twice", name)
		}
		seen[name] = true
		params = append(params, name)
	}
	return params
}

// params checks a method's JSON Schema: an object schema whose properties include the path's
// parameters.
func (v *validator) params(p string, x any, pathParams []string) {
	obj, ok := x.(map[string]any)
	if !ok {
		v.add(p, "want a JSON Schema object, got %s", typeName(x))
		return
	}
	if t, ok := obj["type"]; ok && t != "object" {
		v.add(join(p, "type"), "the arguments are an object: want \"object\"")
	}
	props := map[string]any{}
	if px, ok := obj["properties"]; ok {
		if props, ok = px.(map[string]any); !ok {
			v.add(join(p, "properties"), "want an object, got %s", typeName(px))
			props = map[string]any{}
		}
	}
	if rx, ok := obj["required"]; ok {
		list, ok := rx.([]any)
		if !ok {
			v.add(join(p, "required"), "want a list of names, got %s", typeName(rx))
		}
		for i, r := range list {
			if _, ok := r.(string); !ok {
				v.add(index(join(p, "required"), i), "want a string, got %s", typeName(r))
			}
		}
	}
	for _, name := range pathParams {
		if _, ok := props[name]; !ok {
			v.add(join(p, "properties"), "the path parameter {%s} is not described", name)
		}
	}
}

func (v *validator) envNames(p string, x any) []string {
	switch t := x.(type) {
	case nil:
		return nil
	case string:
		if !reEnv().MatchString(t) {
			v.add(p, "%q is not a variable name", t)
		}
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for i, e := range t {
			s, ok := e.(string)
			if !ok {
				v.add(index(p, i), "want a variable name, got %s", typeName(e))
				continue
			}
			if !reEnv().MatchString(s) {
				v.add(index(p, i), "%q is not a variable name", s)
			}
			out = append(out, s)
		}
		return out
	}
	v.add(p, "want a variable name or a list of them, got %s", typeName(x))
	return nil
}

func (v *validator) envList(p string, obj map[string]any) {
	x, ok := obj["env"]
	if !ok {
		return
	}
	if _, ok := x.([]any); !ok {
		v.add(join(p, "env"), "want a list of variable names, got %s", typeName(x))
		return
	}
	v.envNames(join(p, "env"), x)
}

func (v *validator) mcpProvider(p string, obj map[string]any) {
	cmd, hasCmd := v.str(p, obj, "command", false)
	u, hasURL := v.str(p, obj, "url", false)
	switch {
	case hasCmd && hasURL:
		v.add(p, "give exactly one of command and url, not both")
	case !hasCmd && !hasURL:
		if _, c := obj["command"]; !c {
			if _, u := obj["url"]; !u {
				v.add(p, "give exactly one of command (a stdio server) and url (Streamable HTTP)")
			}
		}
	case hasCmd:
		if len(SplitCommand(cmd)) == 0 {
			v.add(join(p, "command"), "must not be empty")
		}
	case hasURL:
		v.checkURL(join(p, "url"), u)
		if _, ok := obj["env"]; ok {
			v.add(join(p, "env"), "only a stdio server (command) takes env")
		}
	}
	v.envList(p, obj)
}

func (v *validator) moduleProvider(p string, obj map[string]any) {
	ep := join(p, "executables")
	ex, ok := obj["executables"]
	if !ok {
		v.add(ep, "required: the plugin executable for each platform, e.g. {\"linux/amd64\": \"bin/linux-amd64/plugin\"}")
	} else if execs, ok := ex.(map[string]any); !ok {
		v.add(ep, "want an object, got %s", typeName(ex))
	} else {
		if len(execs) == 0 {
			v.add(ep, "at least one platform is required")
		}
		for plat, fx := range execs {
			pp := join(ep, plat)
			if !platforms[plat] {
				v.add(pp, "unknown platform %q: want one of %s", plat, strings.Join(sortedKeys(platforms), ", "))
			}
			f, ok := fx.(string)
			if !ok {
				v.add(pp, "want a file path, got %s", typeName(fx))
				continue
			}
			if err := checkFilePath(f); err != nil {
				v.add(pp, "%v", err)
			}
		}
	}
	v.envList(p, obj)
	if nx, ok := obj["network"]; ok {
		np := join(p, "network")
		hosts, ok := nx.([]any)
		if !ok {
			v.add(np, "want a list of host names, got %s", typeName(nx))
		}
		for i, h := range hosts {
			switch s, ok := h.(string); {
			case !ok:
				v.add(fmt.Sprintf("%s[%d]", np, i), "want a host name such as api.example.com, got %s", typeName(h))
			case !reHostName().MatchString(s):
				v.add(fmt.Sprintf("%s[%d]", np, i), "%q is not a host name such as api.example.com", s)
			}
		}
	}
	if bx, ok := obj["build"]; ok {
		bp := join(p, "build")
		if b, ok := v.object(bp, bx, "go"); ok {
			v.str(bp, b, "go", true)
		}
	}
}

// reHostName is what a module's network entry must look like: a DNS name, * for a part.
var reHostName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\*|[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.(\*|[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?))*$`)
})

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkFilePath checks a file name inside a package: relative, slash-separated, clean, no
// dot-files, nothing that could leave the package folder.
func checkFilePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty file name")
	case strings.HasPrefix(p, "/") || (len(p) > 1 && p[1] == ':'):
		return fmt.Errorf("%q: an absolute path is not allowed", p)
	case strings.ContainsAny(p, "\\\x00"):
		return fmt.Errorf("%q: backslashes and NUL are not allowed", p)
	case path.Clean(p) != p:
		return fmt.Errorf("%q: not a clean relative path", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return fmt.Errorf("%q: .. is not allowed", p)
		}
		if strings.HasPrefix(seg, ".") {
			return fmt.Errorf("%q: dot-files are not packed", p)
		}
	}
	return nil
}

// files checks the manifest's files: a list of clean relative paths inside the package
// folder, each named once, none of them the manifest or a dot-file.
func (v *validator) files(obj map[string]any) {
	x, ok := obj["files"]
	if !ok {
		return
	}
	list, ok := x.([]any)
	if !ok {
		v.add("files", "want a list of paths, got %s", typeName(x))
		return
	}
	seen := map[string]bool{}
	for i, e := range list {
		p := index("files", i)
		s, ok := e.(string)
		if !ok {
			v.add(p, "want a path, got %s", typeName(e))
			continue
		}
		s = strings.TrimSuffix(s, "/")
		switch err := checkFilePath(s); {
		case err != nil:
			v.add(p, "%v", err)
		case s == ManifestFile || strings.HasSuffix(s, ".halotool") || hasSegment(s, "node_modules"):
			v.add(p, "%q is never packed", s)
		case seen[s]:
			v.add(p, "%q is listed twice", s)
		}
		seen[s] = true
	}
}

// SplitCommand splits an mcp command into arguments with simple '...' and "..." quoting.
func SplitCommand(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote = r
			in = true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
