package record

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestTornLastLineIsSkipped(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, "r1", "command", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Event{Event: LoopStart})
	w.Write(Event{Event: AgentStart, Phase: "plan"})
	w.Close()
	f, _ := os.OpenFile(w.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"v":1,"event":"agent_e`)
	f.Close()

	evs, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[1].Phase != "plan" || evs[0].Run != "r1" || evs[0].V != Version {
		t.Fatalf("events %+v", evs)
	}

	// A follower sees only complete lines, and the rest once it is completed.
	fl := NewFollower(dir, true)
	if got := fl.Poll(); len(got) != 2 {
		t.Fatalf("follower saw %d events", len(got))
	}
	f, _ = os.OpenFile(w.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("nd\"}\n{\"v\":1,\"event\":\"loop_stop\"}\n")
	f.Close()
	got := fl.Poll()
	if len(got) != 2 || got[0].Event != AgentEnd || got[1].Event != LoopStop {
		t.Fatalf("after completion: %+v", got)
	}
}

func TestFilesSortOldestFirst(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, d := range []time.Duration{time.Hour, 0, time.Minute} {
		os.WriteFile(filepath.Join(dir, FileName(t0.Add(d), "claude")), nil, 0o644)
	}
	files, _ := Files(dir)
	if len(files) != 3 || filepath.Base(files[0]) != FileName(t0, "claude") {
		t.Fatalf("files %v", files)
	}
}
