package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"halolang.dev/halo/host/runtime"
)

// Slack: the message notify.webhook gets for a paused run, in Block Kit (the question, an
// optional reason, Approve and Decline buttons and the link), and POST /slack/interactions,
// where Slack sends the button presses, each verified with the app's signing secret.

// CodeSlackSignature: a request to /slack/interactions that is not Slack's: no signature, a
// timestamp more than five minutes from the server's clock, or a v0 signature the signing
// secret does not verify.
const CodeSlackSignature = "SLACK_SIGNATURE"

const (
	// DefaultSlackResponseURL is what a button press's response_url must start with for the
	// server to post the answered message there (Config.SlackResponseURL).
	DefaultSlackResponseURL = "https://hooks.slack.com/"
	// slackWindow is how far a request's timestamp may be from the server's clock.
	slackWindow = 5 * time.Minute
	// Block Kit's limits: blocks in a message, characters in a section's text.
	slackMaxBlocks = 50
	slackMaxText   = 3000
	// The ids of the message's parts, as Slack sends them back.
	slackApprove     = "halo_approve"
	slackDecline     = "halo_decline"
	slackOpen        = "halo_open"
	slackActions     = "halo_answer"
	slackReasonBlock = "halo_reason"
	slackReason      = "reason"
)

var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackEscape makes text safe in Slack's markup: with &, < and > escaped, it can hold no
// link, mention (<!channel>, <@U…>) or other control sequence. Everything in a message that
// the server did not write itself goes through it: questions, the model's arguments in them,
// pipeline and channel names, a person's reason.
func slackEscape(s string) string { return slackEscaper.Replace(s) }

// slackChunks cuts s, escaped, into pieces of at most n characters, never inside an escape;
// past most pieces, the last says that the rest was left out.
func slackChunks(s string, n, most int) []string {
	var out []string
	var b strings.Builder
	count := 0
	for _, r := range s {
		e := slackEscape(string(r))
		k := utf8.RuneCountInString(e)
		if count+k > n {
			out = append(out, b.String())
			b.Reset()
			count = 0
		}
		b.WriteString(e)
		count += k
	}
	if b.Len() > 0 || len(out) == 0 {
		out = append(out, b.String())
	}
	if most > 0 && len(out) > most {
		const rest = "… (the rest is on the approval page)"
		last := []rune(out[most-1])
		last = last[:len(last)-min(len(last), utf8.RuneCountInString(rest))]
		if i := strings.LastIndexByte(string(last), '&'); i >= 0 && !strings.Contains(string(last)[i:], ";") {
			last = []rune(string(last)[:i]) // not half an escape
		}
		out = append(out[:most-1], string(last)+rest)
	}
	return out
}

// mrkdwn is a section text object; verbatim, so Slack makes no link of a URL and no
// mention of a name in it.
func mrkdwn(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, text, false, true)
}

func plain(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, text, false, false)
}

// A notice is what notify.webhook gets: a Slack message (text and blocks), and the pause's
// facts for any other receiver.
type notice struct {
	Text     string       `json:"text"`
	Blocks   slack.Blocks `json:"blocks"`
	RunID    string       `json:"runId"`
	Pipeline string       `json:"pipeline"`
	Channel  string       `json:"channel"`
	Question any          `json:"question"`
	Link     string       `json:"link"`
	Expires  time.Time    `json:"expires"`
}

// slackHead is the first section of the messages about a pause.
func slackHead(rec *runtime.Record, channel string) slack.Block {
	return slack.NewSectionBlock(mrkdwn(fmt.Sprintf("Run `%s` of *%s* waits for *%s*", rec.RunID, slackEscape(rec.Pipeline), slackEscape(channel))), nil, nil)
}

// slackQuestion is the question's sections, as many as its length needs of room.
func slackQuestion(question string, room int) []slack.Block {
	if question == "" {
		return nil
	}
	var out []slack.Block
	for _, c := range slackChunks(question, slackMaxText, room) {
		out = append(out, slack.NewSectionBlock(mrkdwn(c), nil, nil))
	}
	return out
}

// notice builds the webhook's message for the pause l of rec, whose link is u. With a
// signing secret, Slack's buttons answer it here; the link's button works either way.
func (s *Server) notice(rec *runtime.Record, l link, u string) notice {
	question := textOf(rec.Meta.Paused.Question)
	expires := time.Unix(l.Expires, 0).UTC()
	text := fmt.Sprintf("Run %s of %s waits for %s", rec.RunID, slackEscape(rec.Pipeline), slackEscape(l.Channel))
	if question != "" {
		text += ": " + slackEscape(trunc(question, 2000))
	}
	text += "\nApprove or decline: <" + u + ">"

	interactive := s.cfg.SlackSecret != ""
	tail := 2 // the buttons and the expiry
	if interactive {
		tail++ // the reason
	}
	blocks := []slack.Block{slackHead(rec, l.Channel)}
	blocks = append(blocks, slackQuestion(question, slackMaxBlocks-len(blocks)-tail)...)
	var buttons []slack.BlockElement
	if interactive {
		tok := strings.TrimPrefix(u, s.links.base+"/approve/")
		reason := slack.NewPlainTextInputBlockElement(plain("Why not, or what to do instead"), slackReason).WithMultiline(true).WithMaxLength(3000)
		blocks = append(blocks, slack.NewInputBlock(slackReasonBlock, plain("Reason (optional; the model reads it when you decline)"), nil, reason).WithOptional(true))
		buttons = append(buttons,
			slack.NewButtonBlockElement(slackApprove, tok, plain("Approve")).WithStyle(slack.StylePrimary),
			slack.NewButtonBlockElement(slackDecline, tok, plain("Decline")).WithStyle(slack.StyleDanger))
	}
	buttons = append(buttons, slack.NewButtonBlockElement(slackOpen, "", plain("Open the approval page")).WithURL(u))
	blocks = append(blocks,
		slack.NewActionBlock(slackActions, buttons...),
		slack.NewContextBlock("", mrkdwn("The link is valid until "+expires.Format(time.RFC1123)+"; anyone who has it, or sees this message, can answer.")))
	return notice{
		Text: text, Blocks: slack.Blocks{BlockSet: blocks},
		RunID: rec.RunID, Pipeline: rec.Pipeline, Channel: l.Channel, Question: rec.Meta.Paused.Question,
		Link: u, Expires: expires,
	}
}

// slackUser names who pressed a button: a mention of their id when it is one (the signed
// request says it), else their name, escaped.
var slackID = regexp.MustCompile(`^[UW][A-Z0-9]{2,20}$`)

func slackUser(u slack.User) string {
	if slackID.MatchString(u.ID) {
		return "<@" + u.ID + ">"
	}
	if u.Name != "" {
		return slackEscape(u.Name)
	}
	return "someone"
}

// slackInteraction is POST /slack/interactions: Slack's request when a person presses a
// button of a notice. Its timestamp is checked before any of the body is read, then the v0
// signature over the timestamp and the body, under the signing secret (slack-go's verifier,
// which compares in constant time); only then is the payload read. The button's value is the
// approval link's token, so an answer here is an answer through the link: once, checked as
// the link is. Slack gets 200 at once; the message is then replaced by one that says who
// answered, through the response_url Slack gave.
func (s *Server) slackInteraction(w http.ResponseWriter, r *http.Request) {
	refuse := func(e *apiError) {
		w.Header().Set("Connection", "close")
		writeError(w, e)
	}
	if ref := s.checks.Check(r, linkChecks); ref != nil {
		refuse(&apiError{ref.Status, ref.Code, ref.Message})
		return
	}
	ts, err := strconv.ParseInt(r.Header.Get("X-Slack-Request-Timestamp"), 10, 64)
	if err != nil || !strings.HasPrefix(r.Header.Get("X-Slack-Signature"), "v0=") {
		refuse(&apiError{http.StatusUnauthorized, CodeSlackSignature, "not a request signed by Slack: X-Slack-Request-Timestamp and a v0 X-Slack-Signature are needed"})
		return
	}
	if d := s.now().Sub(time.Unix(ts, 0)); d > slackWindow || d < -slackWindow {
		refuse(&apiError{http.StatusUnauthorized, CodeSlackSignature, "the request's timestamp is more than five minutes from this server's clock"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			refuse(&apiError{http.StatusRequestEntityTooLarge, CodeTooLarge, fmt.Sprintf("the request is over the limit of %d bytes", s.cfg.MaxBody)})
			return
		}
		refuse(&apiError{http.StatusBadRequest, CodeBadRequest, "cannot read the request"})
		return
	}
	sv, err := slack.NewSecretsVerifier(r.Header, s.cfg.SlackSecret)
	if err == nil {
		sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		refuse(&apiError{http.StatusUnauthorized, CodeSlackSignature, "the request's signature does not verify with the Slack signing secret"})
		return
	}
	form, err := url.ParseQuery(string(body))
	var ic slack.InteractionCallback
	if err == nil {
		err = json.Unmarshal([]byte(form.Get("payload")), &ic)
	}
	if err != nil {
		writeError(w, &apiError{http.StatusBadRequest, CodeBadJSON, "the request holds no interaction payload"})
		return
	}
	var press *slack.BlockAction
	if ic.Type == slack.InteractionTypeBlockActions {
		for _, a := range ic.ActionCallback.BlockActions {
			if a != nil && (a.ActionID == slackApprove || a.ActionID == slackDecline) {
				press = a
				break
			}
		}
	}
	if press == nil {
		// Another interaction (the link's button): nothing to do.
		w.WriteHeader(http.StatusOK)
		return
	}
	reason := ""
	if st := ic.BlockActionState; st != nil {
		reason = strings.TrimSpace(st.Values[slackReasonBlock][slackReason].Value)
	}
	approved := press.ActionID == slackApprove
	l, rec, aerr := s.linkedRun(press.Value)
	if aerr == nil {
		aerr = s.answerLink(r, press.Value, l, rec, approved, reason, "slack")
	}
	w.WriteHeader(http.StatusOK)
	who := slackUser(ic.User)
	if aerr != nil {
		s.log.Info("a Slack answer was refused", "code", aerr.code, "user", ic.User.ID)
		s.slackReply(ic.ResponseURL, slack.WebhookMessage{ResponseType: slack.ResponseTypeEphemeral,
			Text: slackEscape(aerr.message) + " [" + aerr.code + "]"})
		return
	}
	s.log.Info("answered through Slack", "run", rec.RunID, "approved", approved, "user", ic.User.ID)
	done := "Approved by " + who + ": the run goes on."
	if !approved {
		done = "Declined by " + who
		if reason != "" {
			done += ": " + slackEscape(trunc(reason, 2000))
		}
		done += "."
	}
	blocks := []slack.Block{slackHead(rec, l.Channel)}
	blocks = append(blocks, slackQuestion(textOf(rec.Meta.Paused.Question), slackMaxBlocks-2)...)
	blocks = append(blocks, slack.NewContextBlock("", mrkdwn(done)))
	s.slackReply(ic.ResponseURL, slack.WebhookMessage{ReplaceOriginal: true, Text: done, Blocks: &slack.Blocks{BlockSet: blocks}})
}

// slackReply posts msg to a button press's response_url, in the background, when the URL is
// Slack's (Config.SlackResponseURL): a request signed with the secret names it, and the
// server posts nowhere else.
func (s *Server) slackReply(to string, msg slack.WebhookMessage) {
	base := s.cfg.SlackResponseURL
	if base == "" {
		base = DefaultSlackResponseURL
	}
	if !strings.HasPrefix(to, base) {
		if to != "" {
			s.log.Warn("a Slack response_url not under the expected address is not used", "want", base)
		}
		return
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return
	}
	s.postJSON("Slack response_url", to, body, "")
}
