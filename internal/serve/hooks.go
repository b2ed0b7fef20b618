package serve

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/looprinter/looprinter/forge"
	"github.com/looprinter/looprinter/forge/github"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/spec"
)

// StartRequest is one start of a loop: on an issue of its forge (Issue),
// or with an objective of the caller's (Objective), asked for by By.
type StartRequest struct {
	Issue     int
	Objective string
	By        string
}

// maxObjective bounds an objective given to the start action.
const maxObjective = 16 << 10

// errBusy is a start of a loop that is running already.
var errBusy = errors.New("the loop is running already")

// startLoop is the start action: `looprinter run` of the loop in the
// background (as `looprinter start` does), on the issue or with the
// objective asked for.
func startLoop(e ops.Entry, req StartRequest) (string, error) {
	if live, pid := loopdir.Locked(ops.RunDirOf(e)); live {
		return "", fmt.Errorf("%w: %s (pid %d)", errBusy, e.Name, pid)
	}
	args := []string{"run", "-f", e.LoopFile, "-q"}
	if req.Issue > 0 {
		args = append(args, "--issue", strconv.Itoa(req.Issue))
	}
	if req.Objective != "" {
		args = append(args, "--objective", req.Objective)
	}
	log := filepath.Join(ops.LogDir(), e.Key+".log")
	d, err := ops.SpawnDetached(e.Dir, log, args, os.Environ())
	if err != nil {
		return "", err
	}
	ops.Update(e, func(x *ops.Entry) { x.Log, x.LauncherPID = log, d.PID })
	what := "its objective"
	if req.Issue > 0 {
		what = fmt.Sprintf("issue #%d", req.Issue)
	}
	return fmt.Sprintf("started %s on %s (pid %d), asked by %s", e.Name, what, d.PID, req.By), nil
}

// The webhook deliveries kept: the last maxDeliveries ids, none older
// than deliveryAge.
const (
	maxDeliveries = 20000
	deliveryAge   = 30 * 24 * time.Hour
)

// DefaultDeliveriesPath is where `serve` keeps the webhook deliveries it
// took.
func DefaultDeliveriesPath() string {
	return filepath.Join(loopdir.StateRoot(), "serve", "deliveries.json")
}

// OpenDeliveries are the webhook deliveries taken, kept in path across
// restarts (the last 20,000 of the last 30 days). An error is a warning:
// the file could not be read, and the ids it held are forgotten.
func OpenDeliveries(path string) (*github.Seen, error) {
	return github.LoadSeen(path, maxDeliveries, deliveryAge)
}

// githubHook is POST /hooks/github/{name}: GitHub's deliveries for the
// loop name. The signature (X-Hub-Signature-256, under the secret in the
// variable the loop file's forge.github.webhook_secret_env names) is the
// only credential: no token, and a delivery seen before is refused. Every
// delivery, taken or refused, is written to the audit log.
func (s *Server) githubHook(w http.ResponseWriter, r *http.Request) {
	audit := AuditEntry{Action: "github-webhook", Loop: r.PathValue("name"), Remote: r.RemoteAddr}
	rec := &statusRecorder{ResponseWriter: w}
	defer func() {
		audit.Status = rec.status
		if audit.Message == "" {
			audit.Message = strings.TrimSpace(rec.body.String())
		}
		if id := r.Header.Get("X-GitHub-Delivery"); id != "" {
			audit.Message = "delivery " + oneLine(id) + ": " + audit.Message
		}
		s.cfg.Audit.Write(audit)
	}()
	e, err := findLoop(r.PathValue("name"))
	if err != nil {
		httpError(rec, r, http.StatusNotFound, err.Error())
		return
	}
	audit.Loop = e.Key
	l, err := spec.Load(e.LoopFile)
	if err != nil || !l.Forge.On() {
		httpError(rec, r, http.StatusNotFound, "the loop "+e.Name+" names no forge: its loop file has no forge.github")
		return
	}
	g := l.Forge.GitHub
	secret := os.Getenv(g.SecretEnv())
	if secret == "" {
		httpError(rec, r, http.StatusServiceUnavailable, "no webhook secret: set "+g.SecretEnv()+" in the environment of `looprinter serve`")
		return
	}
	h := &github.Webhook{Secret: []byte(secret), Seen: s.seen, Reply: func(ev github.Event) (string, error) {
		msg, err := s.onEvent(e, l, ev)
		audit.Message = msg
		return msg, err
	}}
	h.ServeHTTP(rec, r)
}

// onEvent maps a verified delivery to an action: an issue labelled with
// the loop's label starts it on the issue; "/looprinter run|stop|status"
// in a comment by someone forge.github.allow names runs that action; a
// review submitted or a check suite completed is noted (a running loop
// reads its pull request's reviews and CI itself). Anything else, and
// anything from someone not allowed, starts nothing.
func (s *Server) onEvent(e ops.Entry, l *spec.Loop, ev github.Event) (string, error) {
	g := l.Forge.GitHub
	if !strings.EqualFold(ev.Repo, g.Repo) {
		return "", fmt.Errorf("the delivery is for %s; the loop's forge is %s", ev.Repo, g.Repo)
	}
	allow := g.Allowed()
	a := forge.Allow{Logins: allow.Logins, Associations: allow.Associations}
	by := fmt.Sprintf("github:%s (delivery %s)", ev.Sender, ev.Delivery)
	switch {
	case ev.Kind == "ping":
		return "pong", nil
	case ev.Kind == "issues" && ev.Action == "labeled":
		label := g.StartLabel()
		if ev.Label != label {
			return fmt.Sprintf("ignored: label %q is not %q", ev.Label, label), nil
		}
		if ok, why := a.Allowed(ev.Sender, ev.Association); !ok {
			return "nothing started: " + why, nil
		}
		return s.start(e, StartRequest{Issue: ev.Issue, By: by})
	case ev.Kind == "issue_comment" && ev.Action == "created":
		cmd := commentCommand(ev.Comment)
		if cmd == "" {
			return "ignored: no /looprinter command", nil
		}
		if ok, why := a.Allowed(ev.Sender, ev.Association); !ok {
			return "nothing done: " + why, nil
		}
		switch cmd {
		case "run":
			return s.start(e, StartRequest{Issue: ev.Issue, By: by})
		case "stop":
			res, _, err := ops.StopEntry(e, false, s.cfg.StopTimeout)
			if err != nil {
				return "", err
			}
			if res.PID == 0 {
				return e.Name + " is not running", nil
			}
			return fmt.Sprintf("stopped %s (pid %d), asked by %s", e.Name, res.PID, by), nil
		case "status":
			return s.answerStatus(e, l, ev.Issue, by)
		}
		return "ignored: /looprinter " + cmd + " is not run, stop or status", nil
	case ev.Kind == "pull_request_review" && ev.Action == "submitted":
		n := issueOfBranch(ev.Head)
		if n == 0 {
			return "ignored: a review of a pull request that is no loop's (" + ev.Head + ")", nil
		}
		if ok, why := a.Allowed(ev.Sender, ev.Association); !ok {
			return "nothing started: " + why, nil
		}
		// The run delivers again and reads the pull request's review
		// comments: those by allowed reviewers start its review round.
		return s.start(e, StartRequest{Issue: n, By: by})
	case ev.Kind == "check_suite" && ev.Action == "completed":
		// The CI gate: a run waiting for its commit's CI reads the checks
		// itself (forge.ci.timeout); a completed suite starts nothing.
		return "noted: a check suite completed on " + ev.Head + "; the loop waiting for its CI reads the checks itself", nil
	}
	return fmt.Sprintf("ignored: %s %s", ev.Kind, ev.Action), nil
}

// start starts the loop, or says why not; busy is not an error of the
// delivery.
func (s *Server) start(e ops.Entry, req StartRequest) (string, error) {
	msg, err := s.cfg.Actions.Start(e, req)
	if errors.Is(err, errBusy) {
		return "nothing started: " + err.Error(), nil
	}
	return msg, err
}

// commentCommand is the word after "/looprinter" on a comment's first
// line, or "".
func commentCommand(body string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
	f := strings.Fields(first)
	if len(f) < 2 || f[0] != "/looprinter" {
		return ""
	}
	return strings.ToLower(f[1])
}

// statusLine is a loop's state in one line.
func statusLine(e ops.Entry) string {
	if live, pid := loopdir.Locked(ops.RunDirOf(e)); live {
		return fmt.Sprintf("%s is running (pid %d)", e.Name, pid)
	}
	return e.Name + " is not running"
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

// statusRecorder keeps the status and body of an answer, for the audit.
type statusRecorder struct {
	http.ResponseWriter
	status int
	body   strings.Builder
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.body.Len() < 500 {
		r.body.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

// startAction is POST /api/loops/{name}/start: the loop started in the
// background with the caller's objective (the admin token's holder is
// trusted as the loop file's author is) or on an issue of its forge.
func (s *Server) startAction(e ops.Entry, in actionInput, by string) (string, int, error) {
	obj := strings.TrimSpace(in.Objective)
	switch {
	case obj == "" && in.Issue == 0:
		return "", http.StatusBadRequest, errors.New("start needs objective (the loop's objective for this run) or issue (an issue of its forge)")
	case len(obj) > maxObjective:
		return "", http.StatusBadRequest, fmt.Errorf("the objective is over %d bytes", maxObjective)
	case in.Issue < 0:
		return "", http.StatusBadRequest, errors.New("issue: want an issue number from 1")
	}
	msg, err := s.cfg.Actions.Start(e, StartRequest{Issue: in.Issue, Objective: obj, By: by})
	switch {
	case errors.Is(err, errBusy):
		return "", http.StatusConflict, err
	case err != nil:
		return "", http.StatusInternalServerError, err
	}
	return msg, 0, nil
}

// issueOfBranch is N of a loop's branch looprinter/issue-N, or 0.
func issueOfBranch(branch string) int {
	rest, ok := strings.CutPrefix(branch, "looprinter/issue-")
	n, err := strconv.Atoi(rest)
	if !ok || err != nil || n < 1 {
		return 0
	}
	return n
}
