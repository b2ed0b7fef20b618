package serve

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
)

// While the build runs of a wave work on T-001 and T-002, the loop page's
// plan marks both in progress (and the API's tasks say both are active),
// not only the first; T-003, open and not running, is not.
func TestLoopPageMarksEveryTaskOfAWave(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	os.WriteFile(dir+"/loop.yaml", []byte("version: 1\nname: wavy\nobjective: x\nparallel: 2\nverify: [\"true\"]\n"), 0o644)
	os.MkdirAll(dir+"/"+loopdir.OutputDir, 0o755)
	plan := `{"tasks":[` +
		`{"id":"T-001","title":"one","description":"d","targetFile":"a.txt","passes":false,"notes":""},` +
		`{"id":"T-002","title":"two","description":"d","targetFile":"b.txt","passes":false,"notes":""},` +
		`{"id":"T-003","title":"three","description":"d","targetFile":"c.txt","passes":false,"notes":""}]}`
	os.WriteFile(loopdir.Dir(dir).Plan(), []byte(plan), 0o644)
	w, err := loopdir.Dir(dir).CreateRecords("r", "command", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	st, err := loop.LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.StartedAt, st.Phase, st.CurrentTask, st.PID = time.Now(), loop.PhaseBuild, "T-001", os.Getpid()
	st.InFlight = &loop.InFlight{Phase: "build", Task: "T-001", Run: "r2", Backend: "command", Started: time.Now()}
	st.InFlightMore = []*loop.InFlight{{Phase: "build", Task: "T-002", Run: "r3", Slot: 1, Backend: "command", Started: time.Now()}}
	if err := st.Save(dir); err != nil {
		t.Fatal(err)
	}
	lk, err := loopdir.AcquireLock(dir) // the loop runs: this process holds its lock
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release()
	if err := ops.Save(ops.Entry{Name: "wavy", LoopFile: dir + "/loop.yaml", Dir: dir, RunDir: dir}); err != nil {
		t.Fatal(err)
	}
	tk, _, _ := OpenTokens(t.TempDir() + "/t.json")
	s, err := New(Config{Addr: "127.0.0.1:0", Tokens: tk})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/loops/wavy", nil))
	body := rec.Body.String()
	for _, want := range []string{`<li class="active"><span class="mark">▶</span> <b>T-001</b>`, `<li class="active"><span class="mark">▶</span> <b>T-002</b>`,
		`<li class=""><span class="mark">○</span> <b>T-003</b>`, "T-001, T-002 in progress, 1 more open"} {
		if !strings.Contains(body, want) {
			t.Errorf("the loop page lacks %q", want)
		}
	}
	if n := strings.Count(body, `class="active"`); n != 2 {
		t.Errorf("%d tasks marked in progress; want 2", n)
	}
	var d ops.Detail
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/api/loops/wavy", nil))
	if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
		t.Fatalf("GET /api/loops/wavy: %v: %s", err, rec.Body.String())
	}
	var active []string
	for _, ts := range d.Tasks {
		if ts.Active {
			active = append(active, ts.ID)
		}
	}
	if strings.Join(active, ",") != "T-001,T-002" {
		t.Errorf("the API's active tasks: %v; want T-001, T-002", active)
	}
}
