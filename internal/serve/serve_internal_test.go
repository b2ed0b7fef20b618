package serve

import (
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

func TestNiceMax(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, -1: 1, math.NaN(): 1, 0.03: 0.04, 0.45: 0.8, 0.9: 1, 1.1: 2, 3: 4, 7: 8, 9: 10, 23: 40} {
		if got := niceMax(in); math.Abs(got-want) > 1e-9 {
			t.Errorf("niceMax(%v) = %v, want %v", in, got, want)
		}
	}
}

// The charts hold only what the server formats: no text from the loop.
func TestChartsAreNumbersOnly(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	c := string(costChart([]costPoint{{t0, 0.1}, {t0.Add(time.Minute), 0.5}}, 1))
	for _, want := range []string{`<svg class="chart cost-chart"`, `<path class="line" d="M`, "budget $1.00", "</svg>"} {
		if !strings.Contains(c, want) {
			t.Errorf("cost chart lacks %q:\n%s", want, c)
		}
	}
	f := string(failuresChart([]failPoint{{N: 1, Failed: 3}, {N: 2}}, "cycle"))
	if strings.Count(f, "<rect") != 2 || !strings.Contains(f, "cycle 1: 3 failed") || !strings.Contains(f, `class="bar pass"`) {
		t.Errorf("failures chart:\n%s", f)
	}
	if e := string(costChart(nil, 0)); !strings.Contains(e, "no agent run has ended yet") {
		t.Errorf("empty cost chart: %s", e)
	}
	// One point, no time span: no division by zero.
	if one := string(costChart([]costPoint{{t0, 0}}, 0)); strings.Contains(one, "NaN") || strings.Contains(one, "Inf") {
		t.Errorf("one point: %s", one)
	}
}

func TestRenderTranscript(t *testing.T) {
	raw := []byte(`{"type":"system","subtype":"init"}
{"type":"assistant","message":{"content":[{"type":"text","text":"I will read the file."},{"type":"tool_use","name":"Read","input":{"file_path":"a.go"}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","content":"package a"}]}}
{"type":"assistant","message":{"content":[{"type":"text","text":"Done."}]}}
not json at all
`)
	bl := renderTranscript("claude", raw)
	var kinds []string
	for _, b := range bl {
		kinds = append(kinds, b.Kind)
	}
	got := strings.Join(kinds, " ")
	if got != "event text tool event text" {
		t.Fatalf("blocks %q: %+v", got, bl)
	}
	if !strings.Contains(bl[2].Title, "Read") || bl[1].Body != "I will read the file." || bl[4].Body != "Done.\nnot json at all" {
		t.Errorf("%+v", bl)
	}
	// Codex and Gemini messages are text too.
	cx := renderTranscript("codex", []byte(`{"type":"item.completed","item":{"type":"agent_message","text":"hello from codex"}}`))
	gm := renderTranscript("gemini", []byte(`{"type":"message","role":"assistant","content":"hello from gemini"}`))
	if len(cx) != 1 || cx[0].Body != "hello from codex" || len(gm) != 1 || gm[0].Body != "hello from gemini" {
		t.Errorf("codex %+v gemini %+v", cx, gm)
	}
	// The genuine CLIs' streams (agent/testdata): the agent's words as text,
	// each tool call one collapsed block.
	for backend, want := range map[string][]string{
		"claude": {"tool Write", "text Wrote it."},
		"codex":  {"tool exec_command echo hi", "tool apply_patch", "text All done."},
		"gemini": {"tool run_shell_command", "tool write_file", "text All done."},
	} {
		raw, err := os.ReadFile("../../agent/testdata/streams/" + backend + "-ok.stdout")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, b := range renderTranscript(backend, raw) {
			got = append(got, b.Kind+" "+b.Title+b.Body)
		}
		all := strings.Join(got, "\n")
		for _, w := range want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no %q in\n%s", backend, w, all)
			}
		}
	}
	// Junk never panics.
	renderTranscript("nope", []byte("{\n{\"type\":\n\x00\xff"))
}

func TestRecordsRel(t *testing.T) {
	for p, ok := range map[string]bool{
		"working-records/transcripts/0001.log": true,
		"/l/working-records/checks/x.log":      true,
		"working-records/../loop.yaml":         false,
		"/etc/passwd":                          false,
		"working-records":                      false,
		"":                                     false,
		"/l/working-records/../working-records2/x": false,
	} {
		_, err := recordsRel("/l", p)
		if (err == nil) != ok {
			t.Errorf("recordsRel(%q): %v", p, err)
		}
	}
}

func TestHostAllowed(t *testing.T) {
	s := &Server{cfg: Config{AllowedHosts: []string{"dash.example.com"}}}
	for h, ok := range map[string]bool{
		"127.0.0.1:7878": true, "localhost:7878": true, "LOCALHOST": true, "[::1]:80": true, "10.0.0.5": true,
		"dash.example.com": true, "dash.example.com.:443": true,
		"evil.example": false, "localhost.evil.example": false, "": false, "127.0.0.1.nip.io": false,
	} {
		if got := s.hostAllowed(h); got != ok {
			t.Errorf("hostAllowed(%q) = %v", h, got)
		}
	}
}

// BenchmarkLoopPage draws the page of a loop with 2,000 agent runs (20,000
// records, tool calls included), 200 cycles.
func BenchmarkLoopPage(b *testing.B) {
	b.Setenv("LOOPRINTER_STATE_DIR", b.TempDir())
	dir := b.TempDir()
	os.WriteFile(dir+"/loop.yaml", []byte("version: 1\nname: big\nobjective: x\nverify: [\"true\"]\n"), 0o644)
	w, err := loopdir.Dir(dir).CreateRecords("r", "command", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	pass := false
	for i := 0; i < 2000; i++ {
		c := i/10 + 1
		w.Write(record.Event{Event: record.AgentStart, Cycle: c, Iteration: i, Phase: "build", Task: "T-001"})
		for j := 0; j < 7; j++ {
			w.Write(record.Event{Event: record.ToolCall, Cycle: c, Tool: "Bash", Message: "go test ./..."})
		}
		w.Write(record.Event{Event: record.AgentEnd, Cycle: c, Iteration: i, Phase: "build", Task: "T-001", Status: "ok", CostUSD: 0.01})
		if i%10 == 9 {
			w.Write(record.Event{Event: record.Verify, Cycle: c, Gate: "cycle", Pass: &pass, Checks: []record.Check{{Command: "go test ./...", ExitCode: 1}}, FailureSignal: "FAIL x"})
		}
	}
	w.Close()
	if err := ops.Save(ops.Entry{Name: "big", LoopFile: dir + "/loop.yaml", Dir: dir, RunDir: dir}); err != nil {
		b.Fatal(err)
	}
	tk, _, _ := OpenTokens(b.TempDir() + "/t.json")
	s, err := New(Config{Addr: "127.0.0.1:0", Tokens: tk})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/loops/big", nil))
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
		b.SetBytes(int64(rec.Body.Len()))
	}
}

// Under `redact: off` serve still redacts with its own redactor; a loop's
// redact.patterns apply to answers about it, and a change of the loop file
// is seen.
func TestRedactorsPerLoop(t *testing.T) {
	dir := t.TempDir()
	off, pat := dir+"/off.yaml", dir+"/pat.yaml"
	os.WriteFile(off, []byte("version: 1\nname: off\nobjective: x\nverify: [\"false\"]\nredact: off\n"), 0o644)
	os.WriteFile(pat, []byte("version: 1\nname: pat\nobjective: x\nverify: [\"false\"]\nredact:\n  patterns: ['ticket-[0-9]{6}']\n"), 0o644)
	rs := newRedactors()
	key := "sk-ant-api03-" + strings.Repeat("Zz9", 10)
	for _, f := range []string{"", off, pat, dir + "/missing.yaml"} {
		if got := string(rs.Bytes(f, []byte("k="+key))); strings.Contains(got, key) {
			t.Errorf("%q: %s", f, got)
		}
	}
	if got := string(rs.Bytes(pat, []byte("ticket-123456"))); got == "ticket-123456" {
		t.Errorf("the loop's pattern: %s", got)
	}
	if got := string(rs.Bytes("", []byte("ticket-123456"))); got != "ticket-123456" {
		t.Errorf("another loop's pattern applied to every loop: %s", got)
	}
	time.Sleep(10 * time.Millisecond)
	os.WriteFile(pat, []byte("version: 1\nname: pat\nobjective: x\nverify: [\"false\"]\nredact:\n  patterns: ['order-[0-9]{4}']\n"), 0o644)
	if got := string(rs.Bytes(pat, []byte("order-1234"))); got == "order-1234" {
		t.Errorf("the changed loop file: %s", got)
	}
}

// A loop page reads the loop's summary, what was appended since it was
// last brought up to date, and the last records it shows: the bytes a draw
// reads do not grow with the loop's history. A record file cut or replaced
// is read again from its start.
func TestLoopPageReadsOnlyNewRecords(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	os.WriteFile(dir+"/loop.yaml", []byte("version: 1\nname: grow\nobjective: x\nverify: [\"true\"]\n"), 0o644)
	w, err := loopdir.Dir(dir).CreateRecords("r", "command", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := ops.Save(ops.Entry{Name: "grow", LoopFile: dir + "/loop.yaml", Dir: dir, RunDir: dir}); err != nil {
		t.Fatal(err)
	}
	tk, _, _ := OpenTokens(t.TempDir() + "/t.json")
	s, err := New(Config{Addr: "127.0.0.1:0", Tokens: tk})
	if err != nil {
		t.Fatal(err)
	}
	draw := func(path string) (body string, read int64) {
		t.Helper()
		before := record.BytesRead.Load()
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1"+path, nil))
		if rec.Code != 200 {
			t.Fatalf("%s: status %d: %s", path, rec.Code, rec.Body)
		}
		return rec.Body.String(), record.BytesRead.Load() - before
	}
	size := func() int64 {
		st, err := os.Stat(w.Path())
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	fail := false
	runs := 0
	addRun := func() {
		runs++
		c := runs/10 + 1
		w.Write(record.Event{Event: record.AgentStart, Cycle: c, Iteration: runs, Phase: "build", Task: fmt.Sprintf("T-%05d", runs)})
		w.Write(record.Event{Event: record.ToolCall, Cycle: c, Tool: "Bash", Message: strings.Repeat("x", 200)})
		w.Write(record.Event{Event: record.AgentEnd, Cycle: c, Iteration: runs, Phase: "build", Task: fmt.Sprintf("T-%05d", runs), Status: "ok", CostUSD: 0.01})
		w.Write(record.Event{Event: record.Verify, Cycle: c, Iteration: runs, Gate: "cycle", Pass: &fail, FailureSignal: "FAIL x"})
	}
	for i := 0; i < 300; i++ {
		addRun()
	}
	if _, read := draw("/loops/grow"); read < size() {
		t.Fatalf("the first draw read %d bytes, want at least the whole file (%d): the summary is folded from it", read, size())
	}
	// Each page at two sizes of history: what a draw reads after one new
	// run must not grow with the history.
	pages := []string{"/loops/grow", "/loops/grow?part=live", "/api/loops/grow", "/api/loops/grow/cost",
		"/api/loops/grow/records?n=20", "/api/loops/grow/runs", "/loops/grow/runs/1", "/loops/grow/runs/350"}
	reads := map[string][]int64{}
	var history []int64
	for round := 0; round < 2; round++ {
		for k := 0; k < 3000; k++ { // history grows between draws
			addRun()
		}
		for _, p := range pages {
			draw(p) // brings the summary and the tally up to date
		}
		history = append(history, size())
		for _, p := range pages {
			before := size()
			addRun()
			added := size() - before
			body, read := draw(p)
			if p == "/loops/grow" && !strings.Contains(body, fmt.Sprintf("T-%05d", runs)) {
				t.Errorf("the page does not show the new run T-%05d", runs)
			}
			reads[p] = append(reads[p], read-added)
		}
	}
	for _, p := range pages {
		r := reads[p]
		t.Logf("%s: read %v bytes beyond what was appended, at %v bytes of history", p, r, history)
		if r[1] > r[0]+r[0]/4+8<<10 {
			t.Errorf("%s: a draw read %d bytes at %d bytes of history, %d at %d: it grows with the history", p, r[1], history[1], r[0], history[0])
		}
		if r[1] > 512<<10 {
			t.Errorf("%s: a draw read %d bytes beyond what was appended (history %d bytes)", p, r[1], history[1])
		}
	}
	// Nothing new: the summary is not read again from the records.
	if _, read := draw("/loops/grow"); read > 512<<10 {
		t.Errorf("a draw with nothing new read %d bytes", read)
	}

	// The file cut (a loop's records replaced): read again from the start.
	if err := os.Truncate(w.Path(), 0); err != nil {
		t.Fatal(err)
	}
	body, _ := draw("/loops/grow")
	if strings.Contains(body, "T-00300") {
		t.Error("records of a cut file are still shown")
	}
}
