package studio

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// A field is one input of the start form.
type field struct {
	// Name is the form's name: "in.<param>", or "in.<param>.<field>" in a schema's fieldset.
	Name, ID, Label, Type string
	// Kind is how it is typed in: text, textarea, number, integer, boolean, json.
	Kind  string
	Value string
	Hint  string
	// Fields are a schema-typed parameter's fields, typed in one by one.
	Fields []field
}

type formData struct {
	page
	Pipeline pipelineInfo
	Fields   []field
}

type startData struct {
	page
	Pipelines []pipelineInfo
}

func (s *Studio) pipelines(c caller) ([]pipelineInfo, *apiError) {
	var pl struct {
		Pipelines []pipelineInfo `json:"pipelines"`
	}
	if err := c.call("GET", "/api/pipelines", nil, &pl); err != nil {
		return nil, err
	}
	return pl.Pipelines, nil
}

func (s *Studio) startPage(w http.ResponseWriter, r *http.Request) {
	pl, err := s.pipelines(s.caller(r))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "start", &startData{page: page{Title: "Start a run", Nav: "start"}, Pipelines: pl})
}

// pipeline finds the named pipeline in the API's list.
func (s *Studio) pipeline(c caller, name string) (pipelineInfo, *apiError) {
	pl, err := s.pipelines(c)
	if err != nil {
		return pipelineInfo{}, err
	}
	for _, p := range pl {
		if p.Name == name {
			return p, nil
		}
	}
	names := make([]string, len(pl))
	for i, p := range pl {
		names[i] = p.Name
	}
	return pipelineInfo{}, &apiError{http.StatusNotFound, "UNKNOWN_PIPELINE", fmt.Sprintf("There is no pipeline %q here (there are: %s).", trim(name, 100), strings.Join(names, ", "))}
}

// A schema is the part of a JSON Schema the form reads: the API gives each pipeline's
// input schema, the one /mcp gives its tool.
type schema struct {
	Type       any                `json:"type"`
	Title      string             `json:"title"`
	Properties map[string]*schema `json:"properties"`
	Required   []string           `json:"required"`
	Items      *schema            `json:"items"`
}

// typeName is the schema's type as one word ("" for any).
func (sc *schema) typeName() string {
	if sc == nil {
		return ""
	}
	switch t := sc.Type.(type) {
	case string:
		return t
	case []any:
		if len(t) == 1 {
			if s, ok := t[0].(string); ok {
				return s
			}
		}
	}
	return ""
}

// fieldNames are an object schema's properties: the required ones in their order (a
// pipeline's parameters, a schema type's fields, as written), then the others by name.
func (sc *schema) fieldNames() []string {
	var names []string
	seen := map[string]bool{}
	for _, n := range sc.Required {
		if _, ok := sc.Properties[n]; ok && !seen[n] {
			names, seen[n] = append(names, n), true
		}
	}
	var rest []string
	for n := range sc.Properties {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

// fields builds the form of p's parameters from its input schema, with the values typed
// before.
func fields(p pipelineInfo, values url.Values) []field {
	var in schema
	if len(p.InputSchema) > 0 {
		json.Unmarshal(p.InputSchema, &in)
	}
	types := map[string]string{}
	for _, pa := range p.Params {
		types[pa.Name] = pa.Type
	}
	names := in.fieldNames()
	if len(names) == 0 { // an API without schemas: the parameters, each typed as JSON or text
		for _, pa := range p.Params {
			names = append(names, pa.Name)
		}
	}
	var out []field
	for _, n := range names {
		out = append(out, fieldOf("in."+n, n, types[n], in.Properties[n], values, true))
	}
	return out
}

func fieldOf(name, label, typ string, sc *schema, values url.Values, top bool) field {
	f := field{Name: name, ID: "f-" + strings.ReplaceAll(name, ".", "-"), Label: label, Type: typ, Value: values.Get(name)}
	kind := sc.typeName()
	if f.Type == "" {
		f.Type = halotype(sc)
	}
	switch kind {
	case "string":
		f.Kind = "textarea"
		if !top {
			f.Kind = "text"
		}
	case "number", "integer":
		f.Kind = kind
	case "boolean":
		f.Kind = "boolean"
		if f.Value == "" {
			f.Value = "false"
		}
	default:
		f.Kind = "json"
		f.Hint = jsonHint(kind, f.Type)
		if kind == "object" && top && len(sc.Properties) > 0 {
			f.Kind = "schema"
			for _, n := range sc.fieldNames() {
				f.Fields = append(f.Fields, fieldOf(name+"."+n, n, "", sc.Properties[n], values, false))
			}
		}
	}
	if sc == nil && typ == "String" {
		f.Kind = "textarea"
	}
	return f
}

// halotype names a schema's type as Halo writes it.
func halotype(sc *schema) string {
	switch sc.typeName() {
	case "string":
		return "String"
	case "number":
		return "Number"
	case "integer":
		return "Integer"
	case "boolean":
		return "Boolean"
	case "array":
		if it := halotype(sc.Items); it != "Any" {
			return "List<" + it + ">"
		}
		return "List"
	case "object":
		if sc.Title != "" {
			return sc.Title
		}
		return "Object"
	}
	return "Any"
}

func jsonHint(kind, typ string) string {
	switch kind {
	case "array":
		return `JSON: a list, such as ["a", "b"]`
	case "object":
		if strings.HasPrefix(typ, "Object") || strings.HasPrefix(typ, "Map") {
			return `JSON: an object, such as {"key": "value"}`
		}
		return "JSON: an object with the fields of " + typ
	}
	return "JSON, or plain text"
}

func (s *Studio) formPage(w http.ResponseWriter, r *http.Request) {
	c := s.caller(r)
	p, err := s.pipeline(c, r.PathValue("pipeline"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	d := formData{page: page{Title: "Start " + p.Name, Nav: "start"}, Pipeline: p}
	var values url.Values
	if from := r.URL.Query().Get("from"); from != "" {
		// A rerun with edited inputs: the form holds the run's, to change before starting.
		if values, err = s.prefill(c, from); err != nil {
			s.problem(w, r, err)
			return
		}
		d.Notice = "The inputs of run " + shortID(from) + ": change what you like, then start the run."
	}
	d.Fields = fields(p, values)
	s.render(w, r, http.StatusOK, "form", &d)
}

// start starts a run through the API with the form's inputs, then shows it. Inputs the API
// refuses show the form again, with the message and what was typed.
func (s *Studio) start(w http.ResponseWriter, r *http.Request) {
	c := s.caller(r)
	p, err := s.pipeline(c, r.PathValue("pipeline"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if err := parseForm(w, r); err != nil {
		s.problem(w, r, err)
		return
	}
	fields := fields(p, r.PostForm)
	again := func(e *apiError) {
		s.render(w, r, e.Status, "form", &formData{page: page{Title: "Start " + p.Name, Nav: "start", Problem: e}, Pipeline: p, Fields: fields})
	}
	inputs := map[string]any{}
	for _, f := range fields {
		v, err := inputOf(f)
		if err != nil {
			again(&apiError{http.StatusBadRequest, "BAD_INPUT", err.Error() + " Nothing was started."})
			return
		}
		inputs[f.Label] = v
	}
	var res struct {
		RunID string `json:"runId"`
	}
	if err := c.call("POST", "/api/runs", map[string]any{"pipeline": p.Name, "inputs": inputs}, &res); err != nil {
		if err.Status == http.StatusUnauthorized || err.Status == http.StatusForbidden {
			s.problem(w, r, err)
			return
		}
		err.Message += " Nothing was started."
		again(err)
		return
	}
	http.Redirect(w, r, "/runs/"+url.PathEscape(res.RunID), http.StatusSeeOther)
}

// inputOf is a field's value for the API. A top-level value goes as the text typed (the
// API reads numbers, booleans and JSON from text, and says which input is wrong); a
// schema's fields are put together here.
func inputOf(f field) (any, error) {
	if f.Kind != "schema" {
		return f.Value, nil
	}
	obj := map[string]any{}
	for _, sf := range f.Fields {
		v, err := typed(sf)
		if err != nil {
			return nil, fmt.Errorf("input %s, field %s: %v.", f.Label, sf.Label, err)
		}
		obj[sf.Label] = v
	}
	return obj, nil
}

// typed reads a schema field's text for its type.
func typed(f field) (any, error) {
	s := strings.TrimSpace(f.Value)
	switch f.Kind {
	case "text", "textarea":
		return f.Value, nil
	case "number", "integer":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("want a number, got %q", trim(s, 40))
		}
		return n, nil
	case "boolean":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("want true or false, got %q", trim(s, 40))
		}
		return b, nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("want JSON (%s): %v", f.Hint, err)
	}
	return v, nil
}
