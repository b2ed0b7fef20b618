// Package notify tells someone when a loop stops or nears a budget: it runs
// the loop file's notify.command and/or posts to notify.webhook, with the
// loop's name, what happened and its status line.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/spec"
)

// Kinds of notification, as notify.on names them.
const (
	OnStop       = "stop"        // every stop, whatever the reason
	OnDone       = "done"        // a stop with both gates passed
	OnBlocked    = "blocked"     // a BLOCKED stop
	OnNoProgress = "no_progress" // a NO PROGRESS stop
	OnBudget80   = "budget_80"   // a budget reached 80%
	OnQuestion   = "question"    // an agent asked the operator a question; the loop waits
)

// Kinds lists every value notify.on accepts.
var Kinds = []string{OnStop, OnDone, OnBlocked, OnNoProgress, OnBudget80, OnQuestion}

// Message is what a notification carries; it is the webhook's JSON body and
// the command's standard input, and its fields are also in the command's
// environment (LOOPRINTER_EVENT, LOOPRINTER_LOOP, …).
type Message struct {
	Loop     string    `json:"loop"`
	Event    string    `json:"event"`            // stop, done, blocked, no_progress, budget_80
	Reason   string    `json:"reason,omitempty"` // the stop's reason
	ExitCode *int      `json:"exit_code,omitempty"`
	Budget   string    `json:"budget,omitempty"`      // which budget, for budget_80
	Question string    `json:"question_id,omitempty"` // the question's id, for question (its text is in summary)
	Status   string    `json:"status"`                // the status line
	Summary  string    `json:"summary,omitempty"`
	Dir      string    `json:"dir"`
	Time     time.Time `json:"time"`
	Text     string    `json:"text"` // one human line: chat webhooks show this
}

// Notifier sends a loop's notifications.
type Notifier struct {
	Loop    string
	Dir     string
	Command string
	Webhook string
	On      map[string]bool
	Timeout time.Duration
	Client  *http.Client
	// Redact is applied to every message before it is sent (nil: nothing).
	Redact *redact.Redactor
}

// New returns the notifier of a loop, or nil when it has none configured.
func New(l *spec.Loop) *Notifier {
	if l.Notify.Command == "" && l.Notify.Webhook == "" {
		return nil
	}
	on := map[string]bool{}
	for _, k := range l.Notify.On {
		on[strings.TrimSpace(k)] = true
	}
	return &Notifier{Loop: l.Name, Dir: l.Dir, Command: l.Notify.Command, Webhook: l.Notify.Webhook, On: on,
		Timeout: 30 * time.Second, Client: NewClient(), Redact: loop.Redactor(l)}
}

// ErrRedirect is why a webhook delivery that was redirected to another host
// failed: the payload is never posted anywhere but where the loop file says.
var ErrRedirect = errors.New("redirect to another host refused")

// NewClient is the webhook client: bounded timeouts at every stage, and no
// redirect followed to another host (scheme, host and port must stay the
// same; at most 3 redirects).
func NewClient() *http.Client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
		IdleConnTimeout:       30 * time.Second,
		MaxIdleConns:          2,
	}
	return &http.Client{Timeout: 15 * time.Second, Transport: tr, CheckRedirect: sameHost}
}

func sameHost(req *http.Request, via []*http.Request) error {
	if len(via) >= 3 {
		return fmt.Errorf("%w: more than 3 redirects", ErrRedirect)
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("%w: %s answered a redirect to %s", ErrRedirect, redact.URL(first.String()), redact.URL(req.URL.String()))
	}
	return nil
}

// Classify says which notification an event calls for, if any, among
// those the loop wants.
func (n *Notifier) Classify(ev record.Event) (string, bool) {
	switch ev.Event {
	case record.LoopStop:
		// The most specific kind the loop asked for.
		switch {
		case ev.Reason == loop.ReasonBlocked && n.On[OnBlocked]:
			return OnBlocked, true
		case ev.Reason == loop.ReasonNoProgress && n.On[OnNoProgress]:
			return OnNoProgress, true
		case ev.Reason == loop.ReasonDone && n.On[OnDone]:
			return OnDone, true
		case n.On[OnStop]:
			return OnStop, true
		}
	case record.BudgetWarning:
		if n.On[OnBudget80] {
			return OnBudget80, true
		}
	case record.Question:
		if n.On[OnQuestion] {
			return OnQuestion, true
		}
	}
	return "", false
}

// Hook is the engine hook: it sends and records a notification for each
// event that calls for one. A failed notification is recorded; it does not
// stop the loop.
func (n *Notifier) Hook() loop.Hook {
	return func(ev record.Event, emit func(record.Event)) error {
		kind, ok := n.Classify(ev)
		if !ok {
			return nil
		}
		m := n.message(kind, ev)
		for _, r := range n.Send(m) {
			emit(r)
		}
		return nil
	}
}

func (n *Notifier) message(kind string, ev record.Event) Message {
	m := Message{Loop: n.Loop, Event: kind, Reason: ev.Reason, ExitCode: ev.ExitCode, Status: ops.LineFor(n.Dir),
		Summary: ev.Summary, Dir: n.Dir, Time: time.Now().UTC()}
	switch kind {
	case OnBudget80:
		m.Budget = ev.Kind
		m.Summary = ev.Message
		m.Text = fmt.Sprintf("looprinter %s: %s. %s", n.Loop, ev.Message, m.Status)
	case OnQuestion:
		m.Question, m.Summary = ev.ID, ev.Message
		m.Text = fmt.Sprintf("looprinter %s asks (%s): %s — answer with: looprinter answer %s %s \"…\"", n.Loop, ev.ID, ev.Message, n.Loop, ev.ID)
	default:
		m.Text = fmt.Sprintf("looprinter %s stopped: %s. %s", n.Loop, loop.Title(ev.Reason), m.Status)
	}
	return m
}

// Send delivers m by command and webhook and returns one notify record for
// each channel.
func (n *Notifier) Send(m Message) []record.Event {
	var out []record.Event
	m = redact.Value(n.Redact, m)
	body, _ := json.Marshal(m)
	if n.Command != "" {
		err := n.runCommand(m, body)
		out = append(out, result("command", m, err))
	}
	if n.Webhook != "" {
		err := n.post(body)
		out = append(out, result("webhook", m, err))
	}
	return out
}

func result(channel string, m Message, err error) record.Event {
	ev := record.Event{Event: record.Notify, Kind: m.Event, To: channel, Reason: m.Reason, Message: m.Text, Pass: record.Bool(err == nil)}
	if err != nil {
		ev.Error = err.Error()
	}
	return ev
}

func (n *Notifier) runCommand(m Message, body []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), n.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", n.Command)
	cmd.Dir = n.Dir
	cmd.Stdin = bytes.NewReader(body)
	code := ""
	if m.ExitCode != nil {
		code = strconv.Itoa(*m.ExitCode)
	}
	cmd.Env = append(os.Environ(),
		"LOOPRINTER_EVENT="+m.Event, "LOOPRINTER_LOOP="+m.Loop, "LOOPRINTER_REASON="+m.Reason,
		"LOOPRINTER_EXIT_CODE="+code, "LOOPRINTER_BUDGET="+m.Budget, "LOOPRINTER_QUESTION_ID="+m.Question, "LOOPRINTER_STATUS="+m.Status,
		"LOOPRINTER_SUMMARY="+m.Summary, "LOOPRINTER_DIR="+m.Dir, "LOOPRINTER_MESSAGE="+m.Text)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(n.Redact.String(redact.Command(string(out))))
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return fmt.Errorf("notify.command: %v %s", err, msg)
	}
	return nil
}

func (n *Notifier) post(body []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), n.Timeout)
	defer cancel()
	// The webhook's URL is shown and recorded masked: its path and query
	// often are the token.
	shown := redact.URL(n.Webhook)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.Webhook, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("notify.webhook %s: not a URL", shown)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "looprinter")
	resp, err := n.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message holds the whole URL
		}
		return fmt.Errorf("notify.webhook %s: %s", shown, n.Redact.String(err.Error()))
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		if resp.StatusCode/100 == 3 {
			return fmt.Errorf("notify.webhook %s answered %s: redirect not followed", shown, resp.Status)
		}
		return fmt.Errorf("notify.webhook %s answered %s", shown, resp.Status)
	}
	return nil
}

// Notify sends the notification an event calls for, outside a run (stop
// --now writes the final record of a killed run itself), and returns the
// notify records to append.
func (n *Notifier) Notify(ev record.Event) []record.Event {
	kind, ok := n.Classify(ev)
	if !ok {
		return nil
	}
	return n.Send(n.message(kind, ev))
}

// Killed sends the stop notification a run killed by `looprinter stop`
// could not send, and records it after the final record stop wrote for it.
func Killed(e ops.Entry, dir string) {
	file := e.RunFile
	if file == "" {
		file = e.LoopFile
	}
	l, err := spec.Load(file)
	if err != nil {
		return
	}
	l.Dir = dir
	n := New(l)
	st, err := loop.LoadState(dir)
	if n == nil || err != nil || st.Outcome == "" {
		return
	}
	ev := record.Event{Event: record.LoopStop, Reason: st.Outcome, ExitCode: record.Int(st.ExitCode), Summary: st.Summary}
	for _, r := range n.Notify(ev) {
		r.Run, r.Cycle, r.Iteration = st.Run, st.Cycle, st.Iterations
		ops.AppendRecord(st.Records, r)
	}
}
