package notify

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// loopbackServer is an httptest server bound to 127.0.0.1 only.
func loopbackServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// stateDir writes a loop directory whose state and plan give a known status line.
func stateDir(t *testing.T) string {
	dir := t.TempDir()
	st := &loop.State{Shape: "cycle", Cycle: 2, Phase: loop.PhaseBuild, CycleGate: "fail", ObjectiveGate: "pending",
		CostUSD: 1.5, Outcome: loop.ReasonNoProgress, ExitCode: 2}
	st.StartedAt = time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	if err := st.Save(dir); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "output"), 0o755)
	plan := `{"tasks":[{"id":"T-001","title":"a","description":"d","targetFile":"a","passes":true,"notes":""},{"id":"T-002","title":"b","description":"d","targetFile":"b","passes":false,"notes":""}]}`
	os.WriteFile(filepath.Join(dir, "output", "plan.json"), []byte(plan), 0o644)
	return dir
}

func TestWebhookGetsTheStopWithStatusLine(t *testing.T) {
	var mu sync.Mutex
	var got []Message
	var ctype string
	srv := loopbackServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m Message
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("body %q: %v", b, err)
		}
		mu.Lock()
		got = append(got, m)
		ctype = r.Header.Get("Content-Type")
		mu.Unlock()
	}))
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("server not on loopback: %s", srv.URL)
	}
	dir := stateDir(t)
	l := &spec.Loop{Name: "demo", Dir: dir, Notify: spec.Notify{Webhook: srv.URL, On: spec.StringList{"stop", "no_progress", "budget_80"}}}
	n := New(l)
	var recs []record.Event
	hook := n.Hook()
	code := 2
	// Events that call for nothing are ignored.
	if err := hook(record.Event{Event: record.TaskPassed, Task: "T-001"}, func(e record.Event) { recs = append(recs, e) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 || len(recs) != 0 {
		t.Fatalf("a task_passed sent %d notifications", len(got))
	}
	err := hook(record.Event{Event: record.LoopStop, Reason: loop.ReasonNoProgress, ExitCode: &code, Summary: "same failure 3 times"},
		func(e record.Event) { recs = append(recs, e) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d posts, want 1", len(got))
	}
	m := got[0]
	wantLine := "[Cycle 2] T-001 complete, T-002 next. Cycle gate: fail. Objective gate: pending. $1.50 spent. Stopped: NO PROGRESS (exit 2)."
	if m.Loop != "demo" || m.Event != OnNoProgress || m.Reason != "no_progress" || m.ExitCode == nil || *m.ExitCode != 2 || m.Status != wantLine {
		t.Fatalf("message = %+v", m)
	}
	if m.Text != "looprinter demo stopped: NO PROGRESS. "+wantLine {
		t.Fatalf("text = %q", m.Text)
	}
	if ctype != "application/json" {
		t.Fatalf("content type %q", ctype)
	}
	if len(recs) != 1 || recs[0].Event != record.Notify || recs[0].To != "webhook" || recs[0].Pass == nil || !*recs[0].Pass || recs[0].Kind != OnNoProgress {
		t.Fatalf("records = %+v", recs)
	}
}

func TestWebhookFailureIsRecordedNotFatal(t *testing.T) {
	srv := loopbackServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusBadGateway)
	}))
	l := &spec.Loop{Name: "demo", Dir: stateDir(t), Notify: spec.Notify{Webhook: srv.URL, On: spec.StringList{"budget_80"}}}
	var recs []record.Event
	err := New(l).Hook()(record.Event{Event: record.BudgetWarning, Kind: "cost_usd", Message: "cost_usd budget at 85%"}, func(e record.Event) { recs = append(recs, e) })
	if err != nil {
		t.Fatalf("a failed notification must not fail the loop: %v", err)
	}
	if len(recs) != 1 || recs[0].Pass == nil || *recs[0].Pass || !strings.Contains(recs[0].Error, "502") || recs[0].Kind != OnBudget80 {
		t.Fatalf("records = %+v", recs)
	}
}

func TestClassify(t *testing.T) {
	n := New(&spec.Loop{Notify: spec.Notify{Command: "true", On: spec.StringList{"stop", "blocked"}}})
	cases := []struct {
		ev   record.Event
		want string
	}{
		{record.Event{Event: record.LoopStop, Reason: loop.ReasonBlocked}, OnBlocked},
		{record.Event{Event: record.LoopStop, Reason: loop.ReasonNoProgress}, OnStop}, // no_progress not asked for: the plain stop
		{record.Event{Event: record.LoopStop, Reason: loop.ReasonDone}, OnStop},
		{record.Event{Event: record.BudgetWarning, Kind: "wall"}, ""},
		{record.Event{Event: record.Verify}, ""},
	}
	for _, c := range cases {
		got, _ := n.Classify(c.ev)
		if got != c.want {
			t.Errorf("%s/%s: got %q, want %q", c.ev.Event, c.ev.Reason, got, c.want)
		}
	}
	if New(&spec.Loop{}) != nil {
		t.Fatal("a loop without notify has a notifier")
	}
}
