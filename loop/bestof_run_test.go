package loop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

// SIGKILL in the middle of a best-of, simulated: while the attempts are
// being judged (every attempt ended, none applied), the loop folder and
// the engine's private folder are copied as they are and put back after
// the engine ended. The restarted engine judges the three attempts in
// flight as runs that died, drops their layers (nothing of them reaches
// the folder), runs the best-of again and ends DONE with attempt 2's work.
func TestCrashMidBestOfResumes(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("no bwrap here: a best-of needs a copy-on-write layer per attempt")
	}
	if err := sandbox.LayerProbe(); err != nil {
		t.Skip("no copy-on-write layers here: ", err)
	}
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	snap := t.TempDir()
	files := map[string]string{
		"loop.yaml": "objective: \"out/a.txt says right\"\nagent: {backend: command, command: \"AGENT\", timeout: 60s}\nverify: [grep -qx right out/a.txt]\n",
		"agent.txt": "== plan\nplan T-001:out/a.txt:attempts=3\n== build\n" +
			`run mkdir -p out; if [ "$LOOPRINTER_ATTEMPT" = 2 ]; then echo right > out/a.txt; else echo "wrong-$LOOPRINTER_ATTEMPT" > out/a.txt; fi; echo "T-001: done" >> output/progress.txt` + "\nmark\n",
	}
	priv := string(loopdir.PrivateOf(dir))
	var once sync.Once
	copyOut := func(e record.Event) {
		// The second attempt's agent_end is written while the attempts are
		// judged, before any is applied.
		if e.Event == record.AgentEnd && e.Slot == 2 {
			once.Do(func() {
				for i, from := range []string{dir, priv} {
					to := filepath.Join(snap, []string{"dir", "priv"}[i])
					exec.Command("cp", "-a", from, to).Run()
				}
			})
		}
	}
	out, evs, _ := fakeLoopIn(t, dir, files, nil, Options{Subscribers: []func(record.Event){copyOut}})
	if out.Reason != ReasonDone || len(events(evs, record.AttemptJudged)) != 3 {
		t.Fatalf("the first run: %s, %d attempts judged", out.Reason, len(events(evs, record.AttemptJudged)))
	}
	for i, to := range []string{dir, priv} {
		exec.Command("chmod", "-R", "u+rwx", to).Run()
		if err := os.RemoveAll(to); err != nil {
			t.Fatal(err)
		}
		if err := exec.Command("cp", "-a", filepath.Join(snap, []string{"dir", "priv"}[i]), to).Run(); err != nil {
			t.Fatal(err)
		}
	}
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
