package serve_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"halolang.dev/halo/host/runtime"
)

const slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// fakeSlack is Slack on 127.0.0.1: it takes the incoming webhook's messages (/services/...)
// and the answered messages posted to a press's response_url (/respond/...), and presses
// buttons as Slack does, signing each request with the app's signing secret.
type fakeSlack struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	messages []map[string]any
	replies  []map[string]any
	got      chan struct{}
}

func newFakeSlack(t *testing.T) *fakeSlack {
	f := &fakeSlack{t: t, got: make(chan struct{}, 16)}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&m) != nil {
			w.WriteHeader(400)
			return
		}
		f.mu.Lock()
		if strings.HasPrefix(r.URL.Path, "/respond/") {
			f.replies = append(f.replies, m)
		} else {
			f.messages = append(f.messages, m)
		}
		f.mu.Unlock()
		io.WriteString(w, "ok")
		f.got <- struct{}{}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSlack) webhook() string { return f.srv.URL + "/services/T000/B000/XXXX" }

// wait returns once n messages and replies have come in all.
func (f *fakeSlack) wait(n int) {
	f.t.Helper()
	for {
		f.mu.Lock()
		have := len(f.messages) + len(f.replies)
		f.mu.Unlock()
		if have >= n {
			return
		}
		select {
		case <-f.got:
		case <-time.After(10 * time.Second):
			f.t.Fatalf("Slack got %d posts, want %d", have, n)
		}
	}
}

func (f *fakeSlack) message(i int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.messages[i]
}

func (f *fakeSlack) reply(i int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.replies[i]
}

// button returns the value of the button action_id of a message, "" when it has none.
func button(msg map[string]any, actionID string) string {
	blocks, _ := msg["blocks"].([]any)
	for _, b := range blocks {
		els, _ := b.(map[string]any)["elements"].([]any)
		for _, el := range els {
			el := el.(map[string]any)
			if el["action_id"] == actionID {
				v, _ := el["value"].(string)
				if v == "" {
					v, _ = el["url"].(string)
				}
				return v
			}
		}
	}
	return ""
}

// press is the request Slack sends when a person presses the button actionID whose value is
// value, with reason typed in the reason box: a form holding the block_actions payload.
func (f *fakeSlack) press(actionID, value, reason string) string {
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "user": map[string]any{"id": "U0ADA", "name": "ada"},
		"response_url": f.srv.URL + "/respond/T000/1234/abcd", "trigger_id": "1.2.3",
		"actions": []any{map[string]any{"type": "button", "action_id": actionID, "block_id": "halo_answer", "value": value, "action_ts": "1.0"}},
		"state":   map[string]any{"values": map[string]any{"halo_reason": map[string]any{"reason": map[string]any{"type": "plain_text_input", "value": reason}}}},
	})
	return url.Values{"payload": {string(payload)}}.Encode()
}

// sign is Slack's v0 signature of body at timestamp ts under secret.
func sign(secret string, ts int64, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + strconv.FormatInt(ts, 10) + ":" + body))
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// post sends a body to /slack/interactions with the headers given ("" leaves one out).
func (e *env) slackPost(body, ts, sig string) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.http.URL+"/slack/interactions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if ts != "" {
		req.Header.Set("X-Slack-Request-Timestamp", ts)
	}
	if sig != "" {
		req.Header.Set("X-Slack-Signature", sig)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (e *env) slackSigned(body string) (int, string) {
	ts := time.Now().Unix()
	return e.slackPost(body, strconv.FormatInt(ts, 10), sign(slackSecret, ts, body))
}

// hostile is what a model writes into the question a person reads in Slack: a mention of
// the whole channel, and a link dressed as the approval button.
const hostile = "<!channel> urgent: <https://evil.example/approve|Approve> & go"

// TestSlackMessage is issue 27 item 4 and issue 28 item 7: the webhook's message escapes
// everything the server did not write (&, < and >), so the model's <!channel> and its fake
// link reach Slack as text; it has Approve and Decline buttons and a reason box in Block Kit
// when the server has a signing secret, and the link's button either way.
func TestSlackMessage(t *testing.T) {
	for _, secret := range []string{slackSecret, ""} {
		t.Run("secret="+strconv.FormatBool(secret != ""), func(t *testing.T) {
			slack := newFakeSlack(t)
			e := newEnv(t, opts{webhook: slack.webhook(), public: "https://halo.example.com", slackSecret: secret})
			e.mocks.SetFunc("A.draft", func(runtime.MockRequest) (any, error) { return hostile, nil })
			_, link := e.pausedAsk()
			slack.wait(1)
			msg := slack.message(0)
			// What Slack reads: all but the plain "question", kept for other receivers.
			shown := map[string]any{}
			for k, v := range msg {
				if k != "question" {
					shown[k] = v
				}
			}
			var raw strings.Builder
			enc := json.NewEncoder(&raw)
			enc.SetEscapeHTML(false)
			enc.Encode(shown)
			all := raw.String()
			for _, bad := range []string{"<!channel>", "<https://evil"} {
				if strings.Contains(all, bad) {
					t.Errorf("the message carries the model's markup %q:\n%s", bad, all)
				}
			}
			if q, _ := msg["question"].(string); q != "Approve "+hostile+"?" {
				t.Errorf("question %q: the plain field keeps what was asked", q)
			}
			text, _ := msg["text"].(string)
			if !strings.Contains(text, "&lt;!channel&gt; urgent: &lt;https://evil.example/approve|Approve&gt; &amp; go") || !strings.Contains(text, "<"+link+">") {
				t.Errorf("text %q", text)
			}
			if !strings.Contains(all, `&lt;!channel&gt; urgent`) {
				t.Errorf("the blocks do not show the question escaped:\n%s", all)
			}
			if got := button(msg, "halo_open"); got != link {
				t.Errorf("the link's button is %q, want %q", got, link)
			}
			tok := strings.TrimPrefix(link, "https://halo.example.com/approve/")
			if secret == "" {
				if button(msg, "halo_approve") != "" || strings.Contains(all, "halo_reason") {
					t.Errorf("buttons without a signing secret to verify their presses:\n%s", all)
				}
				if st, _ := e.slackSigned(slack.press("halo_approve", tok, "")); st != http.StatusNotFound {
					t.Errorf("/slack/interactions without a secret: %d", st)
				}
				return
			}
			if button(msg, "halo_approve") != tok || button(msg, "halo_decline") != tok || !strings.Contains(all, `"block_id":"halo_reason"`) {
				t.Errorf("no Approve, Decline and reason:\n%s", all)
			}
		})
	}
}

// TestSlackButtons: a press answers the pause as the link would, once; the message is then
// replaced by one saying who answered, with the reason escaped.
func TestSlackButtons(t *testing.T) {
	for _, action := range []string{"halo_approve", "halo_decline"} {
		t.Run(action, func(t *testing.T) {
			slack := newFakeSlack(t)
			e := newEnv(t, opts{webhook: slack.webhook(), slackSecret: slackSecret, slackResponse: slack.srv.URL + "/respond/"})
			id, _ := e.pausedAsk()
			slack.wait(1)
			tok := button(slack.message(0), action)
			reason := "not now <!here> & later"
			if st, body := e.slackSigned(slack.press(action, tok, reason)); st != 200 {
				t.Fatalf("press: %d %s", st, body)
			}
			done := e.waitStatus(id, runtime.Completed)
			a, _ := done["output"].(map[string]any)["a"].(map[string]any)
			if action == "halo_approve" && a["approved"] != true || action == "halo_decline" && (a["approved"] != false || a["text"] != reason) {
				t.Errorf("the run went on with %v", a)
			}
			slack.wait(2)
			r := slack.reply(0)
			text, _ := r["text"].(string)
			if r["replace_original"] != true || !strings.Contains(text, "<@U0ADA>") {
				t.Errorf("reply %v", r)
			}
			if action == "halo_decline" && !strings.Contains(text, "not now &lt;!here&gt; &amp; later") {
				t.Errorf("the reason is not escaped: %q", text)
			}
			// The same press again (Slack retries, or a replay within the five minutes):
			// the pause is over, and the person is told so, to themselves.
			if st, _ := e.slackSigned(slack.press(action, tok, "")); st != 200 {
				t.Errorf("second press: %d", st)
			}
			slack.wait(3)
			if r := slack.reply(1); r["response_type"] != "ephemeral" || !strings.Contains(r["text"].(string), "LINK_USED") {
				t.Errorf("second press told %v", r)
			}
		})
	}
}

// TestSlackForged: what a stranger sends to /slack/interactions answers nothing: no
// signature, a wrong one, one made with another secret, a timestamp over five minutes
// old (correctly signed), a token this server did not sign; and a request without Slack's
// headers is refused before its body is read.
func TestSlackForged(t *testing.T) {
	slack := newFakeSlack(t)
	e := newEnv(t, opts{webhook: slack.webhook(), slackSecret: slackSecret, slackResponse: slack.srv.URL + "/respond/"})
	id, _ := e.pausedAsk()
	slack.wait(1)
	tok := button(slack.message(0), "halo_approve")
	body := slack.press("halo_approve", tok, "")
	now := time.Now().Unix()
	old := now - 6*60
	for _, c := range []struct{ name, ts, sig string }{
		{"no headers", "", ""},
		{"no signature", strconv.FormatInt(now, 10), ""},
		{"not v0", strconv.FormatInt(now, 10), "v1=" + strings.Repeat("0", 64)},
		{"wrong signature", strconv.FormatInt(now, 10), "v0=" + strings.Repeat("0", 64)},
		{"another secret", strconv.FormatInt(now, 10), sign("another-secret-of-32-characters!", now, body)},
		{"old timestamp", strconv.FormatInt(old, 10), sign(slackSecret, old, body)},
		{"future timestamp", strconv.FormatInt(now+6*60, 10), sign(slackSecret, now+6*60, body)},
		{"bad timestamp", "soon", sign(slackSecret, now, body)},
	} {
		st, resp := e.slackPost(body, c.ts, c.sig)
		if st != http.StatusUnauthorized || !strings.Contains(resp, "SLACK_SIGNATURE") {
			t.Errorf("%s: %d %s", c.name, st, resp)
		}
	}
	if st, _ := e.slackSigned(slack.press("halo_approve", tok[:len(tok)-3]+"AAA", "")); st != 200 {
		t.Errorf("a forged token: %d", st)
	}
	slack.wait(2)
	if r := slack.reply(0); r["response_type"] != "ephemeral" || !strings.Contains(r["text"].(string), "LINK_FORGED") {
		t.Errorf("a forged token told %v", r)
	}
	if m := e.do("GET", "/api/runs/"+id, nil, 200); m["status"] != "paused" {
		t.Errorf("the run is %v", m["status"])
	}

	// A request without Slack's headers whose body never ends is answered at once.
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte("payload="))
	req, _ := http.NewRequest("POST", e.http.URL+"/slack/interactions", pr)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || time.Since(start) > 5*time.Second {
		t.Errorf("a trickled body: %d after %v", resp.StatusCode, time.Since(start))
	}
}
