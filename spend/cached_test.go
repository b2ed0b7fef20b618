package spend

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

// The running tally gives the same report as reading every record, when it
// is taken up again after more records, after a new run's file, and when
// the cache is corrupt or a file was rewritten shorter.
func TestFromDirCachedMatchesFromDir(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := filepath.Join(t.TempDir(), "working-records")
	cache := filepath.Join(t.TempDir(), "spend.json")
	t0 := time.Now()
	w, err := record.Create(dir, "r1", "claude", t0)
	if err != nil {
		t.Fatal(err)
	}
	same := func(when string) {
		t.Helper()
		want, _ := FromDir(dir)
		got, err := FromDirCached(dir, cache)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(want)
		b, _ := json.Marshal(got)
		if string(a) != string(b) {
			t.Fatalf("%s:\ncached %s\nwant   %s", when, b, a)
		}
	}
	w.Write(record.Event{Event: record.LoopStart})
	w.Write(record.Event{Event: record.AgentStart, Phase: "build", Task: "T-1", Backend: "claude", Model: "opus"})
	same("a run under way")
	w.Write(record.Event{Event: record.AgentRetry, Phase: "build", Task: "T-1", CostUSD: 0.5})
	w.Write(record.Event{Event: record.AgentEnd, Phase: "build", Task: "T-1", Backend: "claude", Model: "opus", CostUSD: 1.25, InputTokens: 10})
	w.Write(record.Event{Event: record.TaskPassed, Task: "T-1"})
	same("more records")
	w.Close()
	w2, _ := record.Create(dir, "r2", "codex", t0.Add(time.Second))
	w2.Write(record.Event{Event: record.LoopStart})
	w2.Write(record.Event{Event: record.AgentStart, Phase: "plan", Backend: "codex", Model: "gpt"})
	w2.Write(record.Event{Event: record.AgentEnd, Phase: "plan", Backend: "codex", Model: "gpt", CostUSD: 2})
	w2.Close()
	same("a second run")
	os.WriteFile(cache, []byte("{not json"), 0o600)
	same("a corrupt cache")
	os.WriteFile(w2.Path(), []byte(`{"v":1,"event":"loop_start"}`+"\n"), 0o600)
	same("a file rewritten shorter")
}
