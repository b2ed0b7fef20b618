package serve_test

import (
	"errors"
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
	"github.com/looprinter/looprinter/spec"
)

// "/looprinter status" by an allowed user is answered with a comment on
// the issue the command was on; a stranger's, or another word, is not; a
// comment that cannot be posted is the delivery's error.
func TestStatusCommandComments(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	t.Setenv("WIDGET_HOOK_SECRET", hookSecret)
	dir := t.TempDir()
	file := filepath.Join(dir, "loop.yaml")
	os.WriteFile(file, []byte(hookLoop), 0o644)
	if _, err := ops.Update(ops.Entry{Name: "widget", LoopFile: file, Dir: dir, RunDir: dir, RunFile: file}, func(*ops.Entry) {}); err != nil {
		t.Fatal(err)
	}
	tokens, _, err := serve.OpenTokens(filepath.Join(t.TempDir(), "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var posted []string
	fail := false
	s, err := serve.New(serve.Config{Addr: "127.0.0.1:0", Tokens: tokens, StopTimeout: time.Second, Actions: serve.Actions{
		Comment: func(l *spec.Loop, n int, body string) error {
			mu.Lock()
			defer mu.Unlock()
			if fail {
				return errors.New("the forge said no")
			}
			posted = append(posted, l.Forge.GitHub.Repo+"#"+string(rune('0'+n))+" "+body)
			return nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	deliver := func(id string, body []byte) int {
		t.Helper()
		code, err := fakegithub.Deliver(srv.URL+"/hooks/github/widget", hookSecret, fakegithub.Delivery{ID: id, Event: "issue_comment", Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	if code := deliver("s-1", commented("mallory", "NONE", "/looprinter status")); code != http.StatusAccepted {
		t.Fatalf("a stranger: %d", code)
	}
	if code := deliver("s-2", commented("alice", "OWNER", "/looprinter statuses")); code != http.StatusAccepted {
		t.Fatalf("another word: %d", code)
	}
	got := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), posted...)
	}
	if p := got(); len(p) != 0 {
		t.Fatalf("posted %q", p)
	}
	if code := deliver("s-3", commented("bob", "CONTRIBUTOR", "/looprinter status")); code != http.StatusAccepted {
		t.Fatalf("bob: %d", code)
	}
	if p := got(); len(p) != 1 || !strings.HasPrefix(p[0], "acme/widget#9 looprinter: the loop `widget` is **stopped** (not started)") || !strings.Contains(p[0], "- not started yet") || strings.Contains(p[0], dir) {
		t.Fatalf("posted %q", p)
	}
	mu.Lock()
	fail = true
	mu.Unlock()
	if code := deliver("s-4", commented("bob", "CONTRIBUTOR", "/looprinter status")); code != http.StatusBadRequest {
		t.Fatalf("a comment that could not be posted: %d", code)
	}
}
