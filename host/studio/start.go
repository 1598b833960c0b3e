package studio

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/halo-lang/halo/host/lang"
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
	s.render(w, http.StatusOK, "start", startData{page: page{Title: "Start a run", Nav: "start"}, Pipelines: pl})
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

// fields builds the form of p's parameters, with the values typed before.
func (s *Studio) fields(p pipelineInfo, values url.Values) []field {
	var out []field
	for _, pa := range p.Params {
		f := s.fieldOf("in."+pa.Name, pa.Name, pa.Type, values, true)
		out = append(out, f)
	}
	return out
}

func (s *Studio) fieldOf(name, label, typ string, values url.Values, top bool) field {
	f := field{Name: name, ID: "f-" + strings.ReplaceAll(name, ".", "-"), Label: label, Type: typ, Value: values.Get(name)}
	switch typ {
	case "String":
		f.Kind = "textarea"
		if !top {
			f.Kind = "text"
		}
	case "Number":
		f.Kind = "number"
	case "Integer":
		f.Kind = "integer"
	case "Boolean":
		f.Kind = "boolean"
		if f.Value == "" {
			f.Value = "false"
		}
	default:
		f.Kind = "json"
		f.Hint = jsonHint(typ)
		if sd := s.schema(typ); sd != nil && top {
			f.Kind = "schema"
			for _, fd := range sd.Fields {
				f.Fields = append(f.Fields, s.fieldOf(name+"."+fd.Name.Name, fd.Name.Name, fd.Type.String(), values, false))
			}
		}
	}
	return f
}

func (s *Studio) schema(typ string) *lang.SchemaDecl {
	if s.cfg.Program == nil {
		return nil
	}
	return s.cfg.Program.Schema(typ)
}

func jsonHint(typ string) string {
	switch {
	case strings.HasPrefix(typ, "Array") || strings.HasPrefix(typ, "List"):
		return `JSON: a list, such as ["a", "b"]`
	case strings.HasPrefix(typ, "Object") || strings.HasPrefix(typ, "Map"):
		return `JSON: an object, such as {"key": "value"}`
	case typ == "Any" || typ == "JSON" || typ == "Result":
		return "JSON, or plain text"
	}
	return "JSON: an object with the fields of " + typ
}

func (s *Studio) formPage(w http.ResponseWriter, r *http.Request) {
	c := s.caller(r)
	p, err := s.pipeline(c, r.PathValue("pipeline"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "form", formData{page: page{Title: "Start " + p.Name, Nav: "start"}, Pipeline: p, Fields: s.fields(p, nil)})
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
	fields := s.fields(p, r.PostForm)
	again := func(e *apiError) {
		s.render(w, e.Status, "form", formData{page: page{Title: "Start " + p.Name, Nav: "start", Problem: e}, Pipeline: p, Fields: fields})
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
