package serve_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/fakegithub"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/serve"
)

const hookLoop = `version: 1
name: widget
objective: x
agent: {backend: command, command: "true"}
verify: ["true"]
forge:
  github:
    repo: acme/widget
    webhook_secret_env: WIDGET_HOOK_SECRET
    allow: {logins: [bob], associations: [OWNER, MEMBER]}
`

const hookSecret = "s3cret-of-the-widget-hook"

type hookEnv struct {
	srv    *httptest.Server
	admin  string
	audit  string
	mu     sync.Mutex
	starts []serve.StartRequest
}

func (h *hookEnv) started() []serve.StartRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]serve.StartRequest(nil), h.starts...)
}

func newHookEnv(t *testing.T) *hookEnv {
	t.Helper()
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	t.Setenv("WIDGET_HOOK_SECRET", hookSecret)
	dir := t.TempDir()
	file := filepath.Join(dir, "loop.yaml")
	os.WriteFile(file, []byte(hookLoop), 0o644)
	if _, err := ops.Update(ops.Entry{Name: "widget", LoopFile: file, Dir: dir, RunDir: dir, RunFile: file}, func(*ops.Entry) {}); err != nil {
		t.Fatal(err)
	}
	h := &hookEnv{audit: filepath.Join(t.TempDir(), "audit.jsonl")}
	tokens, admin, err := serve.OpenTokens(filepath.Join(t.TempDir(), "serve", "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	h.admin = admin
	s, err := serve.New(serve.Config{Addr: "127.0.0.1:0", Tokens: tokens, Audit: serve.OpenAudit(h.audit), StopTimeout: time.Second,
		Actions: serve.Actions{Start: func(e ops.Entry, req serve.StartRequest) (string, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.starts = append(h.starts, req)
			return "started " + e.Name, nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = httptest.NewServer(s.Handler())
	t.Cleanup(h.srv.Close)
	return h
}

func labelled(repo, sender, assoc, label string) []byte {
	return []byte(`{"action":"labeled","repository":{"full_name":"` + repo + `"},"sender":{"login":"` + sender + `"},"issue":{"number":7,"author_association":"` + assoc + `"},"label":{"name":"` + label + `"}}`)
}

func commented(sender, assoc, body string) []byte {
	return []byte(`{"action":"created","repository":{"full_name":"acme/widget"},"sender":{"login":"` + sender + `"},"issue":{"number":9,"author_association":"OWNER"},"comment":{"body":"` + body + `","author_association":"` + assoc + `"}}`)
}

// GitHub's deliveries start a loop only when signed with the loop's
// secret, once per delivery id, from someone forge.github.allow names;
// each start names who asked, and every delivery is in the audit log.
func TestGitHubWebhookStarts(t *testing.T) {
	h := newHookEnv(t)
	url := h.srv.URL + "/hooks/github/widget"
	deliver := func(secret, id, event string, body []byte) int {
		t.Helper()
		code, err := fakegithub.Deliver(url, secret, fakegithub.Delivery{ID: id, Event: event, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	// Forged: signed with another secret, or not signed at all.
	if code := deliver("not-the-secret", "d-1", "issues", labelled("acme/widget", "alice", "OWNER", "looprinter")); code != http.StatusUnauthorized {
		t.Fatalf("a forged delivery: %d", code)
	}
	req, _ := http.NewRequest("POST", url, bytes.NewReader(labelled("acme/widget", "alice", "OWNER", "looprinter")))
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set("X-GitHub-Delivery", "d-2")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an unsigned delivery: %v %v", res, err)
	}
	if n := len(h.started()); n != 0 {
		t.Fatalf("forged deliveries started %d loops", n)
	}
	// The issue labelled by an owner: the loop starts on it.
	if code := deliver(hookSecret, "d-3", "issues", labelled("acme/widget", "alice", "OWNER", "looprinter")); code != http.StatusAccepted {
		t.Fatalf("a labelled issue: %d", code)
	}
	st := h.started()
	if len(st) != 1 || st[0].Issue != 7 || st[0].Objective != "" || !strings.Contains(st[0].By, "github:alice") || !strings.Contains(st[0].By, "d-3") {
		t.Fatalf("starts %+v", st)
	}
	// The same delivery again: a replay, refused.
	if code := deliver(hookSecret, "d-3", "issues", labelled("acme/widget", "alice", "OWNER", "looprinter")); code != http.StatusConflict {
		t.Fatalf("a replay: %d", code)
	}
	// Another label, another repository, a stranger's comment: nothing.
	if code := deliver(hookSecret, "d-4", "issues", labelled("acme/widget", "alice", "OWNER", "bug")); code != http.StatusAccepted {
		t.Fatalf("another label: %d", code)
	}
	if code := deliver(hookSecret, "d-5", "issues", labelled("evil/fork", "alice", "OWNER", "looprinter")); code != http.StatusBadRequest {
		t.Fatalf("another repository: %d", code)
	}
	if code := deliver(hookSecret, "d-6", "issue_comment", commented("mallory", "NONE", "/looprinter run")); code != http.StatusAccepted {
		t.Fatalf("a stranger's comment: %d", code)
	}
	if code := deliver(hookSecret, "d-7", "issues", labelled("acme/widget", "mallory", "NONE", "looprinter")); code != http.StatusAccepted {
		t.Fatalf("a stranger's issue labelled: %d", code)
	}
	if n := len(h.started()); n != 1 {
		t.Fatalf("a stranger, a label or a repository not the loop's started a loop: %+v", h.started())
	}
	// /looprinter run by a login allow names (a contributor): it starts.
	if code := deliver(hookSecret, "d-8", "issue_comment", commented("bob", "CONTRIBUTOR", "/looprinter run\\nplease")); code != http.StatusAccepted {
		t.Fatalf("bob's comment: %d", code)
	}
	if st := h.started(); len(st) != 2 || st[1].Issue != 9 || !strings.Contains(st[1].By, "github:bob") {
		t.Fatalf("starts %+v", st)
	}
	audit, _ := os.ReadFile(h.audit)
	for _, want := range []string{`"action":"github-webhook"`, `"status":401`, `"status":409`, `delivery d-6: nothing done: mallory (NONE) is not allowed`, `delivery d-3: started widget`} {
		if !strings.Contains(string(audit), want) {
			t.Errorf("the audit log has no %s:\n%s", want, audit)
		}
	}
}

// POST /api/loops/{name}/start starts a loop with an objective, with the
// admin token only; the start names the token.
func TestAPIStart(t *testing.T) {
	h := newHookEnv(t)
	post := func(token, body string) int {
		req, _ := http.NewRequest("POST", h.srv.URL+"/api/loops/widget/start", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := post("", `{"objective":"make it so"}`); code != http.StatusUnauthorized {
		t.Fatalf("no token: %d", code)
	}
	if code := post(h.admin, `{}`); code != http.StatusBadRequest {
		t.Fatalf("no objective: %d", code)
	}
	if n := len(h.started()); n != 0 {
		t.Fatalf("started %d", n)
	}
	if code := post(h.admin, `{"objective":"make it so"}`); code != http.StatusOK {
		t.Fatalf("start: %d", code)
	}
	if st := h.started(); len(st) != 1 || st[0].Objective != "make it so" || !strings.HasPrefix(st[0].By, "serve token ") {
		t.Fatalf("starts %+v", st)
	}
}

// The loop's page links the issue it works on and its pull request.
func TestLoopPageLinksIssueAndPull(t *testing.T) {
	h := newHookEnv(t)
	entries, _ := ops.Entries()
	if len(entries) != 1 {
		t.Fatalf("entries %+v", entries)
	}
	e := entries[0]
	ops.Update(e, func(x *ops.Entry) {
		x.Issue, x.Pull = "https://github.com/acme/widget/issues/7", "javascript:alert(1)"
	})
	res, err := http.Get(h.srv.URL + "/loops/" + e.Key)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	page := b.String()
	if !strings.Contains(page, `<a id="forge-issue" href="https://github.com/acme/widget/issues/7" rel="noreferrer">`) {
		t.Fatalf("no link to the issue:\n%s", page)
	}
	if strings.Contains(page, `href="javascript:`) || !strings.Contains(page, `id="forge-pull"`) {
		t.Fatalf("the pull request's link is missing or unsafe:\n%s", page)
	}
}
