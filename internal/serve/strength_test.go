package serve

import (
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// The loop page shows the last verify_strength pass: the figures and each
// survivor with file:line:column, escaped.
func TestLoopPageShowsStrength(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	os.WriteFile(dir+"/loop.yaml", []byte("version: 1\nname: strong\nobjective: x\nverify: [\"true\"]\n"), 0o644)
	w, err := loopdir.Dir(dir).CreateRecords("r", "command", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	st, err := loop.LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.StartedAt = time.Now()
	st.Strength = &record.Strength{Mutants: 6, Caught: 3, NotCompiled: 1, Score: 0.75, Min: 0.8,
		Survivors: []record.Survivor{{File: "calc.py", Line: 2, Column: 10, Op: "flip_comparison", Mutation: "flip < to >="}}}
	if err := st.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := ops.Save(ops.Entry{Name: "strong", LoopFile: dir + "/loop.yaml", Dir: dir, RunDir: dir}); err != nil {
		t.Fatal(err)
	}
	tk, _, _ := OpenTokens(t.TempDir() + "/t.json")
	s, err := New(Config{Addr: "127.0.0.1:0", Tokens: tk})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/loops/strong", nil))
	body := rec.Body.String()
	for _, want := range []string{"Verifier strength", "caught <b>3</b> of the 6 mutants", "score 0.75, minimum 0.80: <b>NOT met</b>", "1 did not compile",
		"<code>calc.py:2:10</code> flip &lt; to &gt;="} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// The loop page names the hosts the loop's proxy refused (what to add to
// network.allow), the flaky checks with the tests that flipped, and the
// build runs of a wave in flight (task, slot, backend, start, run id),
// escaped: an agent chose those names.
func TestLoopPageShowsRefusedHostsAndFlaky(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	os.WriteFile(dir+"/loop.yaml", []byte("version: 1\nname: netty\nobjective: x\nverify: [\"true\"]\n"), 0o644)
	w, err := loopdir.Dir(dir).CreateRecords("r", "command", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	st, err := loop.LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.StartedAt = time.Now()
	st.NetRefused = []string{"evil.example:443", "<script>x</script>:80"}
	st.Flaky = map[string][]string{"go test ./...": {"TestFlaky"}}
	st.InFlight = &loop.InFlight{Phase: "build", Task: "T-001", Run: "r2", Backend: "claude", Started: time.Now()}
	st.InFlightMore = []*loop.InFlight{{Phase: "build", Task: "<T-002>", Run: "r3", Slot: 1, Backend: "codex", Started: time.Now()},
		{Phase: "build", Task: "T-003", Run: "r4", Slot: 2, Backend: "codex", Started: time.Now(), Attempt: 3}}
	if err := st.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := ops.Save(ops.Entry{Name: "netty", LoopFile: dir + "/loop.yaml", Dir: dir, RunDir: dir}); err != nil {
		t.Fatal(err)
	}
	tk, _, _ := OpenTokens(t.TempDir() + "/t.json")
	s, err := New(Config{Addr: "127.0.0.1:0", Tokens: tk})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/loops/netty", nil))
	body := rec.Body.String()
	for _, want := range []string{"Network: refused hosts", "<code>evil.example:443</code>", "&lt;script&gt;x&lt;/script&gt;:80", "network.allow",
		"Flaky checks", "<code>go test ./...</code>: tests that flipped <code>TestFlaky</code>",
		"Build runs in flight", "<code>T-001</code>: slot 1, claude, started", "(run r2)", "<code>&lt;T-002&gt;</code>: slot 2, codex", "<code>T-003</code> attempt 3: slot 3, codex"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>x</script>") {
		t.Error("a host name reached the page unescaped")
	}
}
