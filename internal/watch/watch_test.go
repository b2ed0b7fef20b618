package watch

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/testenv"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

var update = flag.Bool("update", false, "rewrite the golden frames")

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	time.Local = time.UTC
	os.Exit(testenv.Main(m))
}

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

const loopFile = `version: 1
objective: "three files"
agent: {backend: command, command: "true"}
budget: {iterations: 10, cycles: 4, cost_usd: 2, wall: 1h}
`

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	b, _ := json.MarshalIndent(v, "", "  ")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeRecords(t *testing.T, dir string, evs []record.Event) {
	t.Helper()
	var b strings.Builder
	for _, e := range evs {
		e.V, e.Run = 1, "r1"
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	p := filepath.Join(dir, loopdir.RecordsDir, "20261130T090000.000000000Z-loop-command.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// fixture writes two loops: "alpha" in the middle of a build run (its
// lock held by the test), "beta" finished DONE.
func fixture(t *testing.T) ([]ops.Entry, func()) {
	t.Helper()
	root := t.TempDir()
	a, b := filepath.Join(root, "alpha"), filepath.Join(root, "beta")
	for _, d := range []string{a, b} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "loop.yaml"), []byte(loopFile), 0o644)
	}
	writeJSON(t, loopdir.Dir(a).State(), loop.State{Shape: "cycle", Phase: loop.PhaseBuild, Cycle: 2, Iterations: 5, AgentRuns: 7,
		CostUSD: 0.84, WallMS: 754000, CycleGate: "pending", ObjectiveGate: "pending", CurrentTask: "T-002", StartedAt: t0, PID: 4242})
	writeJSON(t, filepath.Join(a, "output", "plan.json"), loop.Plan{Tasks: []loop.Task{
		{ID: "T-001", Title: "Write the parser", Description: "d", TargetFile: "p.go", Passes: true},
		{ID: "T-002", Title: "Write the printer", Description: "d", TargetFile: "q.go"},
		{ID: "T-003", Title: "Wire the command", Description: "d", TargetFile: "r.go"}}})
	writeRecords(t, a, []record.Event{
		{TS: at(0), Event: record.LoopStart, Loop: "alpha", Shape: "cycle", PID: 4242},
		{TS: at(10), Event: record.AgentStart, Cycle: 2, Iteration: 4, Phase: "build", Task: "T-001", Backend: "claude", Model: "sonnet"},
		{TS: at(11), Event: record.ToolCall, Cycle: 2, Phase: "build", Tool: "Read", Message: "p.go"},
		{TS: at(60), Event: record.AgentEnd, Cycle: 2, Phase: "build", Task: "T-001", Status: "ok", DurationMS: 50000, CostUSD: 0.12},
		{TS: at(61), Event: record.TaskPassed, Cycle: 2, Iteration: 4, Task: "T-001"},
		{TS: at(62), Event: record.AgentStart, Cycle: 2, Iteration: 5, Phase: "build", Task: "T-002", Backend: "claude", Model: "sonnet"},
		{TS: at(63), Event: record.ToolCall, Cycle: 2, Phase: "build", Tool: "Read", Message: "q.go"},
		{TS: at(70), Event: record.ToolCall, Cycle: 2, Phase: "build", Tool: "Edit", Message: "q.go: add Print"},
		{TS: at(75), Event: record.ToolCall, Cycle: 2, Phase: "build", Tool: "Bash", Message: "go test ./...\n(multi-line)"},
	})
	writeJSON(t, loopdir.Dir(b).State(), loop.State{Shape: "cycle", Phase: loop.PhaseDone, Cycle: 1, Iterations: 1, CostUSD: 0.1, WallMS: 30000,
		CycleGate: "pass", ObjectiveGate: "pass", StartedAt: t0, Outcome: loop.ReasonDone, Summary: "both gates passed in cycle 1 after 1 build runs"})
	writeJSON(t, filepath.Join(b, "output", "plan.json"), loop.Plan{Tasks: []loop.Task{
		{ID: "T-001", Title: "Only task", Description: "d", TargetFile: "x", Passes: true}}})
	writeRecords(t, b, []record.Event{
		{TS: at(0), Event: record.LoopStart, Loop: "beta", Shape: "cycle", PID: 977},
		{TS: at(20), Event: record.Verify, Cycle: 1, Gate: "objective", Pass: record.Bool(true)},
		{TS: at(21), Event: record.LoopStop, Reason: "done", ExitCode: record.Int(0), Summary: "both gates passed"},
	})
	lock, err := loopdir.AcquireLock(a)
	if err != nil {
		t.Fatal(err)
	}
	entries := []ops.Entry{
		{Key: "alpha-1", Name: "alpha", LoopFile: filepath.Join(a, "loop.yaml"), Dir: a, RunDir: "/loops/alpha", RunFile: filepath.Join(a, "loop.yaml")},
		{Key: "beta-1", Name: "beta", LoopFile: filepath.Join(b, "loop.yaml"), Dir: b, RunDir: "/loops/beta", RunFile: filepath.Join(b, "loop.yaml")},
	}
	// The files are read from the real directories (Dir); the view shows
	// fixed ones (RunDir), see poller.
	return entries, lock.Release
}

// poller reads the fixture and pins what differs between runs (pid, dirs).
func poller(t *testing.T, entries []ops.Entry) func() []LoopView {
	dirs := map[string]string{}
	for _, e := range entries {
		dirs[e.Key] = e.Dir
	}
	src := NewSource(func() []ops.Entry {
		out := make([]ops.Entry, len(entries))
		for i, e := range entries {
			e.RunDir = dirs[e.Key]
			out[i] = e
		}
		return out
	})
	return func() []LoopView {
		vs := src.Poll()
		for i := range vs {
			if vs[i].Status.PID != 0 {
				vs[i].Status.PID = 4242
			}
			vs[i].Status.RunDir = "/loops/" + vs[i].Status.Name
		}
		return vs
	}
}

type fakeActions struct{ calls []string }

func (f *fakeActions) Stop(e ops.Entry) (string, error) {
	f.calls = append(f.calls, "stop "+e.Name)
	return "stopped " + e.Name + " (pid 4242)", nil
}
func (f *fakeActions) Pause(e ops.Entry) (string, error) {
	f.calls = append(f.calls, "pause "+e.Name)
	return e.Name + " pauses before its next agent run", nil
}
func (f *fakeActions) Resume(e ops.Entry) (string, error) {
	f.calls = append(f.calls, "resume "+e.Name)
	return "", errors.New("boom")
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if string(want) != got {
		t.Errorf("frame %s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func send(t *testing.T, m tea.Model, msg tea.Msg) (tea.Model, tea.Cmd) {
	t.Helper()
	return m.Update(msg)
}

func key(s string) tea.KeyMsg {
	switch s {
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func TestGoldenFrames(t *testing.T) {
	entries, done := fixture(t)
	defer done()
	poll := poller(t, entries)
	fa := &fakeActions{}
	var m tea.Model = New(poll, time.Second, fa)
	golden(t, "reading", m.View())

	m, _ = send(t, m, tea.WindowSizeMsg{Width: 100, Height: 40})
	// Init reads the files; its message is the first snapshot.
	msg := New(poll, time.Second, fa).Init()()
	m, cmd := send(t, m, msg)
	if cmd == nil {
		t.Fatal("the first snapshot schedules no tick")
	}
	golden(t, "alpha_running", m.View())

	m, _ = send(t, m, key("tab"))
	golden(t, "beta_done", m.View())
	m, _ = send(t, m, key("tab"))
	if v, _ := m.(Model).Selected(); v.Status.Name != "alpha" {
		t.Fatalf("tab did not wrap around: %s", v.Status.Name)
	}

	// s asks first; another key cancels.
	m, cmd = send(t, m, key("s"))
	if cmd != nil || len(fa.calls) != 0 {
		t.Fatal("a single s stopped the loop")
	}
	golden(t, "stop_confirm", m.View())
	m, _ = send(t, m, key("x"))
	if len(fa.calls) != 0 || !strings.Contains(m.View(), "stop cancelled") {
		t.Fatal("cancel did not cancel")
	}
	// s s stops the selected loop.
	m, _ = send(t, m, key("s"))
	m, cmd = send(t, m, key("s"))
	if cmd == nil {
		t.Fatal("s s gave no command")
	}
	m, _ = send(t, m, cmd())
	if strings.Join(fa.calls, ",") != "stop alpha" {
		t.Fatalf("calls %v", fa.calls)
	}
	golden(t, "stopped_message", m.View())

	// p and r act on the selected loop; an error is shown.
	m, cmd = send(t, m, key("p"))
	m, _ = send(t, m, cmd())
	if !strings.Contains(m.View(), "alpha pauses before its next agent run") {
		t.Fatal(m.View())
	}
	m, cmd = send(t, m, key("r"))
	m, _ = send(t, m, cmd())
	if !strings.Contains(m.View(), "error: boom") {
		t.Fatal(m.View())
	}
	if strings.Join(fa.calls, ",") != "stop alpha,pause alpha,resume alpha" {
		t.Fatalf("calls %v", fa.calls)
	}

	// A narrow terminal truncates lines rather than wrapping them.
	m, _ = send(t, m, tea.WindowSizeMsg{Width: 50, Height: 20})
	for _, l := range strings.Split(m.View(), "\n") {
		if w := lipgloss.Width(l); w > 50 {
			t.Fatalf("line wider than 50 (%d): %q", w, l)
		}
	}
	// q quits.
	_, cmd = send(t, m, key("q"))
	if cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q does not quit")
	}
}

func TestSourceTailsNewToolCalls(t *testing.T) {
	entries, done := fixture(t)
	defer done()
	poll := poller(t, entries)
	v := poll()[0]
	if len(v.Tools) != 3 || v.Tools[0].Message != "q.go" || v.Agent == nil || v.Agent.Task != "T-002" || v.Ended != nil {
		t.Fatalf("first poll: tools %v agent %+v", v.Tools, v.Agent)
	}
	// The agent run ends and a new one starts: the tail starts again.
	f, _ := filepath.Glob(filepath.Join(entries[0].Dir, loopdir.RecordsDir, "*.jsonl"))
	fh, _ := os.OpenFile(f[0], os.O_APPEND|os.O_WRONLY, 0)
	for _, e := range []record.Event{
		{TS: at(90), Event: record.AgentEnd, Phase: "build", Task: "T-002", Status: "ok"},
		{TS: at(91), Event: record.AgentStart, Phase: "build", Task: "T-003", Backend: "claude"},
		{TS: at(92), Event: record.ToolCall, Tool: "Write", Message: "r.go"},
	} {
		e.V = 1
		b, _ := json.Marshal(e)
		fh.Write(append(b, '\n'))
	}
	fh.WriteString(`{"v":1,"event":"tool_c`) // a line still being written
	fh.Close()
	v = poll()[0]
	if len(v.Tools) != 1 || v.Tools[0].Tool != "Write" || v.Agent.Task != "T-003" || v.Records != 12 {
		t.Fatalf("second poll: tools %v agent %+v records %d", v.Tools, v.Agent, v.Records)
	}
}

// A plan title, a tool call and a record that carry terminal escape
// sequences (a window title change, a screen clear) reach the screen
// escaped, never raw.
func TestEscapesInUntrustedTextAreShownEscaped(t *testing.T) {
	d := filepath.Join(t.TempDir(), "evil")
	os.MkdirAll(d, 0o755)
	os.WriteFile(filepath.Join(d, "loop.yaml"), []byte(loopFile), 0o644)
	writeJSON(t, loopdir.Dir(d).State(), loop.State{Shape: "cycle", Phase: loop.PhaseBuild, Cycle: 1, Iterations: 1,
		CurrentTask: "T-001", StartedAt: t0, Outcome: loop.ReasonBlocked, Summary: "stop\x1b[2J"})
	writeJSON(t, filepath.Join(d, "output", "plan.json"), loop.Plan{Tasks: []loop.Task{
		{ID: "T-001", Title: "pwn\x1b]0;owned\x07\x1b[2J\x1b[H", Description: "d", TargetFile: "p.go"}}})
	writeRecords(t, d, []record.Event{
		{TS: at(0), Event: record.LoopStart, Loop: "evil", Shape: "cycle"},
		{TS: at(1), Event: record.AgentStart, Cycle: 1, Phase: "build", Task: "T-001", Backend: "command"},
		{TS: at(2), Event: record.ToolCall, Cycle: 1, Phase: "build", Tool: "Bash\x1b[31m", Message: "echo \x1b]0;x\x07"},
		{TS: at(3), Event: record.Warning, Message: "agent said \x1b[2J\x9b31m"},
	})
	entries := []ops.Entry{{Key: "evil-1", Name: "evil\x1b[1m", LoopFile: filepath.Join(d, "loop.yaml"), Dir: d, RunDir: d}}
	poll := func() []LoopView { return NewSource(func() []ops.Entry { return entries }).Poll() }
	var m tea.Model = New(poll, time.Second, &fakeActions{})
	m, _ = send(t, m, tea.WindowSizeMsg{Width: 200, Height: 40})
	m, _ = send(t, m, New(poll, time.Second, &fakeActions{}).Init()())
	view := m.View()
	if strings.IndexByte(view, 0x1b) >= 0 || strings.IndexByte(view, 0x07) >= 0 || strings.ContainsRune(view, 0x9b) {
		t.Fatalf("raw control characters on the screen:\n%q", view)
	}
	for _, want := range []string{`pwn\x1b]0;owned\x07`, `agent said \x1b[2J`} {
		if !strings.Contains(view, want) {
			t.Errorf("%q is not shown escaped:\n%s", want, view)
		}
	}
}

// A wave's runs are each shown in flight, with slot, backend and attempt.
func TestDetailShowsAWavesRunsInFlight(t *testing.T) {
	started := time.Now().Add(-3 * time.Second)
	st := &loop.State{Phase: loop.PhaseBuild, CurrentTask: "T-001",
		InFlight:     &loop.InFlight{Phase: "build", Task: "T-001", Run: "r1", Backend: "claude", Started: started},
		InFlightMore: []*loop.InFlight{{Phase: "build", Task: "T-002", Run: "r2", Slot: 1, Backend: "codex", Started: started, Attempt: 2}}}
	var b strings.Builder
	line := func(f string, a ...any) { b.WriteString(fmt.Sprintf(f, a...) + "\n") }
	Model{}.detail(&b, line, LoopView{Status: ops.Status{Loop: st}})
	out := b.String()
	for _, want := range []string{"in flight T-001   slot 1   claude   3s", "in flight T-002 attempt 2   slot 2   codex   3s"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// A single run (no wave) shows no such line.
	b.Reset()
	Model{}.detail(&b, line, LoopView{Status: ops.Status{Loop: &loop.State{Phase: loop.PhaseBuild, InFlight: &loop.InFlight{Phase: "build", Task: "T-001"}}}})
	if strings.Contains(b.String(), "in flight") {
		t.Errorf("a run outside a wave is listed:\n%s", b.String())
	}
}
