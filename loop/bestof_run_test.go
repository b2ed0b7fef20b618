package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// SIGKILL in the middle of a best-of, simulated: while the attempts are
// being judged (every attempt ended, none applied), the loop folder and
// the engine's private folder are copied as they are and put back after
// the engine ended. The restarted engine judges the three attempts in
// flight as runs that died, drops their layers (nothing of them reaches
// the folder), runs the best-of again and ends DONE with attempt 2's work.
func TestCrashMidBestOfResumes(t *testing.T) {
	needLayers(t, "a best-of needs a copy-on-write layer per attempt")
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	files := map[string]string{
		"loop.yaml": "objective: \"out/a.txt says right\"\nagent: {backend: command, command: \"AGENT\", timeout: 60s}\nverify: [grep -qx right out/a.txt]\n",
		"agent.txt": "== plan\nplan T-001:out/a.txt:attempts=3\n== build\n" +
			`run mkdir -p out; if [ "$LOOPRINTER_ATTEMPT" = 2 ]; then echo right > out/a.txt; else echo "wrong-$LOOPRINTER_ATTEMPT" > out/a.txt; fi; echo "T-001: done" >> output/progress.txt` + "\nmark\n",
	}
	// The second attempt's agent_end is written while the attempts are
	// judged, before any is applied.
	copyOut, crash := crashAt(t, dir, func(e record.Event) bool { return e.Event == record.AgentEnd && e.Slot == 2 })
	out, evs, _ := fakeLoopIn(t, dir, files, nil, Options{Subscribers: []func(record.Event){copyOut}})
	if out.Reason != ReasonDone || len(events(evs, record.AttemptJudged)) != 3 {
		t.Fatalf("the first run: %s, %d attempts judged", out.Reason, len(events(evs, record.AttemptJudged)))
	}
	crash()
	st, err := ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.InFlight == nil || len(st.InFlightMore) != 2 {
		t.Fatalf("the saved state at the crash: slot 1 in flight %v, others %d; want all three attempts in flight", st.InFlight, len(st.InFlightMore))
	}
	if _, err := os.Stat(filepath.Join(dir, "out/a.txt")); err == nil {
		t.Fatal("an attempt reached the folder before the attempts were judged")
	}

	out, evs, _ = fakeLoopIn(t, dir, files, nil, Options{})
	if out.Reason != ReasonDone {
		t.Fatalf("after the crash: %s: %s", out.Reason, out.Summary)
	}
	died := 0
	for _, e := range events(evs, record.AgentEnd) {
		if strings.Contains(e.Error, "the engine died") && e.Task == "T-001" {
			died++
		}
	}
	if died != 3 {
		t.Fatalf("%d attempts judged as runs that died, want 3", died)
	}
	kept := 0
	for _, e := range events(evs, record.AttemptJudged) {
		if e.Kind == "kept" {
			kept++
			if e.Attempt != 2 {
				t.Fatalf("attempt %d kept, want 2", e.Attempt)
			}
		}
	}
	if kept != 1 {
		t.Fatalf("%d attempts kept after the resume, want 1", kept)
	}
	if got := readFile(t, filepath.Join(dir, "out/a.txt")); got != "right\n" {
		t.Fatalf("out/a.txt: %q", got)
	}
	for k := 0; k < 3; k++ {
		l, _ := slotLayer(dir, k)
		if ents, _ := sandbox.LayerEntries(l.Upper); len(ents) > 0 {
			t.Fatalf("slot %d's layer still holds %d entries", k+1, len(ents))
		}
	}
	if out.State.InFlight != nil || len(out.State.InFlightMore) != 0 {
		t.Fatalf("runs in flight at the end: %v %v", out.State.InFlight, out.State.InFlightMore)
	}
}

// A best-of starts only the attempts the budgets cover: the iteration
// budget left, and past the first attempt a run's reserve each of the cost
// budget left (the mean cost of the runs so far here).
func TestBestOfWidth(t *testing.T) {
	l := &spec.Loop{Budget: spec.Budget{Iterations: 10, CostUSD: 10}}
	cases := []struct {
		iters, runs int
		cost        float64
		n, want     int
	}{
		{0, 0, 0, 3, 3},  // nothing known of the cost yet: the iteration budget decides
		{8, 0, 0, 3, 2},  // two build runs left
		{10, 0, 0, 3, 0}, // none left
		{1, 2, 6, 3, 1},  // $4 left at $3 a run: the second attempt's reserve is not covered
		{1, 4, 2, 3, 3},  // $8 left at $0.50 a run
		{1, 2, 4, 3, 3},  // $6 left at $2 a run: exactly covered
	}
	for _, c := range cases {
		st := &State{Iterations: c.iters, AgentRuns: c.runs, CostUSD: c.cost}
		if got := bestOfWidth(l, st, c.n); got != c.want {
			t.Errorf("%d iterations, %d runs, $%.2f spent, %d asked: %d attempts, want %d", c.iters, c.runs, c.cost, c.n, got, c.want)
		}
	}
}
