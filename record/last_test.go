package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStopOfAndLastOf(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, "r1", "command", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	path := w.Path()
	if _, ok := StopOf(path); ok {
		t.Error("an empty file has a loop_stop")
	}
	if got := LastOf(path, "paused", "resumed"); got != "" {
		t.Errorf("LastOf of an empty file = %q", got)
	}
	w.Write(Event{Event: LoopStart})
	w.Write(Event{Event: "paused"})
	w.Write(Event{Event: "resumed"})
	w.Write(Event{Event: "paused"})
	if got := LastOf(path, "paused", "resumed", AgentStart); got != "paused" {
		t.Errorf("LastOf = %q, want paused", got)
	}
	if _, ok := StopOf(path); ok {
		t.Error("a run still going has a loop_stop")
	}
	w.Write(Event{Event: LoopStop, Reason: "done", ExitCode: Int(0)})
	ev, ok := StopOf(path)
	if !ok || ev.Reason != "done" || ev.ExitCode == nil || *ev.ExitCode != 0 {
		t.Errorf("StopOf = %+v %v, want the loop_stop", ev, ok)
	}
	// A new run started in the same file after the stop: it has not ended.
	w.Write(Event{Event: LoopStart})
	if _, ok := StopOf(path); ok {
		t.Error("a loop_start after the loop_stop still counts as stopped")
	}
	w.Close()

	// Only the tail is read: a stop more than 64 KiB before the end is not
	// seen, however the file begins.
	big := filepath.Join(dir, "big.jsonl")
	body := `{"event":"loop_stop","reason":"old"}` + "\n" + strings.Repeat(`{"event":"warning","message":"x"}`+"\n", 3000)
	if err := os.WriteFile(big, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := StopOf(big); ok {
		t.Error("a loop_stop 90 KiB before the end was read")
	}
	// A stop whose line is torn does not parse.
	torn := filepath.Join(dir, "torn.jsonl")
	os.WriteFile(torn, []byte(`{"event":"loop_stop","reason":`), 0o600)
	if _, ok := StopOf(torn); ok {
		t.Error("a torn loop_stop counts")
	}
	// The stop is found whether a line follows it (a warning written after
	// it) or it is the file's last line without a newline.
	after := filepath.Join(dir, "after.jsonl")
	os.WriteFile(after, []byte(`{"event":"loop_start"}`+"\n"+`{"event":"loop_stop","reason":"budget"}`+"\n"+`{"event":"warning","message":"late"}`+"\n"), 0o600)
	if ev, ok := StopOf(after); !ok || ev.Reason != "budget" {
		t.Errorf("a stop followed by a line: %+v %v", ev, ok)
	}
	bare := filepath.Join(dir, "bare.jsonl")
	os.WriteFile(bare, []byte(`{"event":"loop_start"}`+"\n"+`{"event":"loop_stop","reason":"budget"}`), 0o600)
	if ev, ok := StopOf(bare); !ok || ev.Reason != "budget" {
		t.Errorf("a stop on the last line without a newline: %+v %v", ev, ok)
	}
	if got := LastOf(bare, "loop_start", "loop_stop"); got != "loop_stop" {
		t.Errorf("LastOf = %q, want loop_stop", got)
	}
	if _, ok := StopOf(""); ok {
		t.Error("no file has a loop_stop")
	}
	if _, ok := StopOf(filepath.Join(dir, "missing")); ok {
		t.Error("a missing file has a loop_stop")
	}
}
