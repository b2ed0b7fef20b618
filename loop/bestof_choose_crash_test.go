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

// SIGKILL while the reviewer of retry.choose: review has ended but before
// the engine cleared its layer, simulated as TestCrashMidBestOfResumes
// does. The reviewer wrote into its view of the folder (a planted file, a
// wrong target); the saved state has it and the attempts in flight. The
// restarted engine judges them as runs that died, applies none of their
// layers (the reviewer's least of all), runs the best-of again, and ends
// DONE with the reviewer's pick, nothing the reviewer wrote in the folder
// and every slot's layer empty.
func TestCrashMidBestOfChooserResumes(t *testing.T) {
	needLayers(t, "a best-of needs a copy-on-write layer per attempt")
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	files := map[string]string{
		"loop.yaml": "objective: \"out/a.txt says right\"\nagent: {backend: command, command: \"AGENT\", timeout: 60s}\nverify: [grep -qx right out/a.txt]\nretry: {best_of: 3, choose: review}\n",
		"agent.txt": "== plan\nplan T-001:out/a.txt:attempts=3\n== build\n" +
			`run mkdir -p out; case "$LOOPRINTER_ATTEMPT" in 1) echo wrong > out/a.txt;; 2) echo right > out/a.txt;; *) echo right > out/a.txt; echo more > out/extra.txt;; esac; echo "T-001: done" >> output/progress.txt` + "\nmark\n" +
			"== chooser\nrun echo planted > planted.txt; echo wrong > out/a.txt\nsay {\"keep\": 3, \"reason\": \"the fuller one\"}\n",
	}
	copyOut, crash := crashAt(t, dir, func(e record.Event) bool { return e.Event == record.AgentEnd && e.Phase == spec.PhaseChooser })
	out, evs, _ := fakeLoopIn(t, dir, files, nil, Options{Subscribers: []func(record.Event){copyOut}})
	if out.Reason != ReasonDone || len(events(evs, record.BestOfChosen)) != 1 {
		t.Fatalf("the first run: %s, %d best_of_chosen", out.Reason, len(events(evs, record.BestOfChosen)))
	}
	crash()
	st, err := ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.InFlight == nil || st.InFlight.Phase != spec.PhaseChooser || len(st.InFlightMore) != 3 {
		t.Fatalf("the saved state at the crash: in flight %+v, others %d; want the chooser and the three attempts", st.InFlight, len(st.InFlightMore))
	}
	chooserLayer, _ := slotLayer(dir, 3)
	if _, err := os.Stat(filepath.Join(chooserLayer.Upper, "planted.txt")); err != nil {
		t.Fatalf("the reviewer's layer at the crash holds no planted.txt (the test does not test): %v", err)
	}
	for _, f := range []string{"planted.txt", "out/a.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Fatalf("%s reached the folder before any attempt was kept", f)
		}
	}

	out, evs, _ = fakeLoopIn(t, dir, files, nil, Options{})
	if out.Reason != ReasonDone {
		t.Fatalf("after the crash: %s: %s", out.Reason, out.Summary)
	}
	chosen := events(evs, record.BestOfChosen)
	if len(chosen) != 1 || chosen[0].By != spec.ChooseReview || chosen[0].Attempt != 3 {
		t.Fatalf("best_of_chosen after the resume: %+v", chosen)
	}
	if _, err := os.Stat(filepath.Join(dir, "planted.txt")); err == nil {
		t.Fatal("the reviewer's planted file reached the folder")
	}
	if got := readFile(t, filepath.Join(dir, "out/a.txt")); got != "right\n" {
		t.Fatalf("out/a.txt: %q", got)
	}
	if got := readFile(t, filepath.Join(dir, "out/extra.txt")); !strings.Contains(got, "more") {
		t.Fatalf("out/extra.txt: %q (the reviewer's pick, attempt 3, is not the kept one)", got)
	}
	for k := 0; k <= 3; k++ {
		l, _ := slotLayer(dir, k)
		if ents, _ := sandbox.LayerEntries(l.Upper); len(ents) > 0 {
			t.Fatalf("slot %d's layer still holds %d entries", k+1, len(ents))
		}
	}
	if out.State.InFlight != nil || len(out.State.InFlightMore) != 0 {
		t.Fatalf("runs in flight at the end: %v %v", out.State.InFlight, out.State.InFlightMore)
	}
}
