package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"halolang.dev/halo/host/mcpserver"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// pageTmpl is the approval page: the question and two buttons; only the POST acts.
var pageTmpl = template.Must(template.New("approve").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin"><title>{{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}
pre{white-space:pre-wrap;background:#f4f4f4;padding:1rem;border-radius:.4rem}
textarea{width:100%;min-height:4rem}button{font-size:1rem;padding:.5rem 1.2rem;margin:.5rem .5rem 0 0}
.meta{color:#666;font-size:.9rem}.err{color:#a00}</style></head>
<body><h1>{{.Title}}</h1>
{{if .Error}}<p class="err">{{.Error}}</p>{{end}}
{{if .RunID}}<p class="meta">Run {{.RunID}} of {{.Pipeline}}, waiting on {{.Channel}}{{if .Expires}} · link valid until {{.Expires}}{{end}}</p>{{end}}
{{if .Question}}<pre>{{.Question}}</pre>{{end}}
{{if .Form}}<form method="post">
<label for="reason">Reason or answer (optional)</label>
<textarea id="reason" name="reason" maxlength="4000"></textarea>
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="decline">Decline</button>
</form>{{end}}
</body></html>
`))

// linkChecks are the checks an approval link's requests get: Origin and Host as for the
// API, a form or JSON on POST, and no token: the link is the capability.
var linkChecks = mcpserver.CheckOptions{Form: true, NoToken: true}

type pageData struct {
	Title, Error, RunID, Pipeline, Channel, Question, Expires string
	Form                                                      bool
}

func (s *Server) page(w http.ResponseWriter, status int, d pageData) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // no-referrer makes browsers send Origin: null on the form, which the checks refuse
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	pageTmpl.Execute(w, d)
}

// linkedRun checks an approval link's token and returns the paused run it answers.
func (s *Server) linkedRun(tok string) (link, *runtime.Record, *apiError) {
	l, aerr := s.links.parse(tok, s.now())
	if aerr != nil {
		return l, nil, aerr
	}
	rec, err := s.store.Load(l.RunID)
	if err != nil {
		return l, nil, &apiError{http.StatusNotFound, CodeRunNotFound, fmt.Sprintf("run %s is not in this server's store", l.RunID)}
	}
	cur, ok := s.links.pauseOf(rec)
	if !ok || cur.Step != l.Step || cur.Channel != l.Channel {
		return l, rec, &apiError{http.StatusConflict, CodeLinkUsed, fmt.Sprintf("this link was used already, or run %s was answered another way: it is %s now", rec.RunID, rec.Status)}
	}
	return l, rec, nil
}

// approvePage is GET /approve/<token>: it shows the question and the buttons and changes
// nothing, so a link preview or a mail scanner that opens it approves nothing.
func (s *Server) approvePage(w http.ResponseWriter, r *http.Request) {
	if ref := s.checks.Check(r, linkChecks); ref != nil {
		s.page(w, ref.Status, pageData{Title: "Refused", Error: ref.Message + " [" + ref.Code + "]"})
		return
	}
	_, rec, aerr := s.linkedRun(r.PathValue("token"))
	if aerr != nil {
		s.page(w, aerr.status, pageData{Title: "This link cannot be used", Error: aerr.message + " [" + aerr.code + "]"})
		return
	}
	l, _ := s.links.pauseOf(rec)
	s.page(w, http.StatusOK, pageData{
		Title: "Approve or decline", RunID: rec.RunID, Pipeline: rec.Pipeline, Channel: l.Channel,
		Question: textOf(rec.Meta.Paused.Question), Expires: time.Unix(l.Expires, 0).UTC().Format(time.RFC1123), Form: true,
	})
}

// approve is POST /approve/<token>: a form (the page's buttons) or JSON {decision, reason}.
// The link is used once; the run continues with {approved, action, text} on its channel.
func (s *Server) approve(w http.ResponseWriter, r *http.Request) {
	asJSON := false
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		asJSON = true
	}
	read := false
	fail := func(e *apiError) {
		if !read {
			// The body is left unread: the connection closes rather than wait for it.
			w.Header().Set("Connection", "close")
		}
		if asJSON {
			writeError(w, e)
			return
		}
		s.page(w, e.status, pageData{Title: "Not done", Error: e.message + " [" + e.code + "]"})
	}
	if ref := s.checks.Check(r, linkChecks); ref != nil {
		fail(&apiError{ref.Status, ref.Code, ref.Message})
		return
	}
	// The link is checked before a byte of the body is read: a stranger's POST to a link
	// this server did not sign, or whose pause is over, costs no read.
	tok := r.PathValue("token")
	l, rec, aerr := s.linkedRun(tok)
	if aerr != nil {
		fail(aerr)
		return
	}
	decision, reason, aerr := s.decision(w, r, asJSON)
	read = true
	if aerr != nil {
		fail(aerr)
		return
	}
	approved := decision == "approve"
	if aerr := s.answerLink(r, tok, l, rec, approved, reason, "link"); aerr != nil {
		fail(aerr)
		return
	}
	if asJSON {
		writeJSON(w, http.StatusAccepted, map[string]any{"runId": rec.RunID, "status": runtime.Running, "approved": approved})
		return
	}
	title := "Approved"
	if !approved {
		title = "Declined"
	}
	s.page(w, http.StatusOK, pageData{Title: title, RunID: rec.RunID, Pipeline: rec.Pipeline, Channel: l.Channel, Question: "The run goes on with your answer. You can close this page."})
}

// answerLink answers the pause that the link tok (l, for run rec) stands for, once: the run
// continues on the link's channel with {approved, action, text}, text only when a reason
// was given. via says how the answer came ("link", "slack").
func (s *Server) answerLink(r *http.Request, tok string, l link, rec *runtime.Record, approved bool, reason, via string) *apiError {
	first, err := s.store.UseLink(r.Context(), s.links.id(tok), l.RunID)
	if err != nil {
		return errorOf(err)
	}
	if !first {
		return &apiError{http.StatusConflict, CodeLinkUsed, "this link was used already"}
	}
	action := "decline"
	if approved {
		action = "approve"
	}
	payload := map[string]any{"approved": approved, "action": action}
	if reason != "" {
		payload["text"] = reason
	}
	sig := runstore.Signal{Channel: l.Channel, Payload: payload, Via: via}
	sw := &capture{header: http.Header{}}
	if err := s.continueRun(sw, r, 0, rec.RunID, sig); err != nil {
		return errorOf(err)
	}
	if sw.status/100 != 2 {
		var body struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(sw.body, &body)
		return &apiError{sw.status, body.Error.Code, body.Error.Message}
	}
	return nil
}

// decision reads the POST's decision (approve or decline) and reason.
func (s *Server) decision(w http.ResponseWriter, r *http.Request, asJSON bool) (string, string, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return "", "", &apiError{http.StatusRequestEntityTooLarge, CodeTooLarge, "the answer is over the limit of 64 KiB"}
		}
		return "", "", &apiError{http.StatusBadRequest, CodeBadRequest, "cannot read the answer"}
	}
	var decision, reason string
	if asJSON {
		var v struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return "", "", &apiError{http.StatusBadRequest, CodeBadJSON, `want {"decision": "approve" or "decline", "reason": "..."}`}
		}
		decision, reason = v.Decision, v.Reason
	} else {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return "", "", &apiError{http.StatusBadRequest, CodeBadRequest, "the form cannot be read"}
		}
		decision, reason = form.Get("decision"), form.Get("reason")
	}
	decision = strings.ToLower(strings.TrimSpace(decision))
	if decision != "approve" && decision != "decline" {
		return "", "", &apiError{http.StatusBadRequest, CodeBadRequest, `the decision must be "approve" or "decline"`}
	}
	return decision, strings.TrimSpace(reason), nil
}

// capture keeps a response the approval handler turns into a page.
type capture struct {
	header http.Header
	status int
	body   []byte
}

func (c *capture) Header() http.Header { return c.header }
func (c *capture) WriteHeader(s int) {
	if c.status == 0 {
		c.status = s
	}
}
func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.body = append(c.body, p...)
	return len(p), nil
}
