package loop

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/statefile"
)

// longState is the state of a loop that ran a long time: 400 build
// iterations over 8 cycles of a 60-task plan, its failures, its tells, the
// files it touched and its flaky checks recorded as the engine bounds them.
func longState() *State {
	st := freshState()
	st.Loop, st.Shape, st.Phase, st.Cycle = "long", "plan_build", PhaseBuild, 8
	st.Iterations, st.AgentRuns, st.PlanRuns, st.TasksPassed = 400, 430, 12, 300
	st.CostUSD, st.WallMS, st.SetupDone, st.BaselineDone = 123.45, 40*3600*1000, true, true
	st.CycleGate, st.ObjectiveGate, st.PID, st.Run = "pending", "pending", 4242, "20261205T030000-4242"
	st.StartedAt = time.Date(2026, 12, 3, 1, 2, 3, 0, time.UTC)
	st.Records = "/home/user/project/working-records/records/20261205T030000-4242.jsonl"
	line := func(i int) string {
		return fmt.Sprintf("--- FAIL: TestSomething%d (0.%02ds)\n    thing_test.go:%d: got %q, want \"b\"", i, i%100, 10+i, strings.Repeat("a", i%40))
	}
	st.Baseline = map[string][]string{}
	st.BaselineChecks = map[string]string{}
	for c := 0; c < 3; c++ {
		cmd := fmt.Sprintf("go test ./pkg%d/...", c)
		for i := 0; i < 15; i++ {
			st.Baseline[cmd] = append(st.Baseline[cmd], line(i))
		}
		st.BaselineChecks[cmd] = strings.Join(st.Baseline[cmd], "\n")
		st.BaselineSignal += st.BaselineChecks[cmd] + "\n"
	}
	for i := 0; i < 20; i++ {
		st.RuledOut = append(st.RuledOut, fmt.Sprintf("T-%03d attempt %d: %s", i%60, i, line(i)))
		st.Tried = append(st.Tried, fmt.Sprintf("iteration %d: changed parser.go to handle %d", 380+i, i))
	}
	st.LastFailure, st.FailureSig, st.SameCount = line(7), "c8:abcdef0123456789", 2
	st.TaskRepeats = map[string]*Repeat{}
	st.TaskBase, st.TaskFails = map[string]string{}, map[string]int{}
	st.Judged = &Plan{}
	for i := 0; i < 60; i++ {
		id := fmt.Sprintf("T-%03d", i)
		st.Judged.Tasks = append(st.Judged.Tasks, Task{ID: id, Title: "Implement part " + id, Description: strings.Repeat("Describe what the task does. ", 6),
			TargetFile: fmt.Sprintf("internal/part%d/part.go", i), Passes: i < 50, Notes: "notes " + id})
		st.TaskBase[id] = fmt.Sprintf("%064x", i*7919)
		for c := 1; c <= 8; c++ {
			if (i+c)%3 == 0 {
				st.TaskFails[fmt.Sprintf("c%d/%s", c, id)] = (i + c) % 4
			}
		}
		st.TaskRepeats[id] = &Repeat{Sig: fmt.Sprintf("%016x", i), Count: i % 3}
	}
	for i := 0; i < 50; i++ {
		st.Tells = append(st.Tells, fmt.Sprintf("internal/part%d/part_test.go: a test's assertion removed (iteration %d)", i, 300+i))
		st.Evidence = append(st.Evidence, fmt.Sprintf("go test ./internal/part%d/... passed", i))
	}
	for i := 0; i < 600; i++ {
		st.Touched = append(st.Touched, fmt.Sprintf("internal/part%d/file%03d.go", i%60, i))
	}
	st.Flaky = map[string][]string{"go test ./...": {"TestRace", "TestTimeout", "TestNetwork"}}
	st.NetRefused = []string{"proxy.golang.org:443", "sum.golang.org:443"}
	st.InFlight = &InFlight{Phase: PhaseBuild, Task: "T-055", Seq: 431, Transcript: "/home/user/project/working-records/transcripts/431.jsonl",
		PromptFile: "/home/user/project/working-records/prompts/431.md", Run: "r431", Started: time.Now().UTC()}
	return st
}

// BenchmarkStoreSave measures store.save on a long loop's state (and on a
// short one's, as BenchmarkBuildIteration's loop has it), as a build
// iteration calls it: a step's end (journal and public copy, not synced),
// a run about to start (journal, synced) and a note (journal only); a
// counter and the wall time change between saves, as they do in a loop.
// cpu-us/save is the process's CPU time (user and system) per save;
// written-bytes/save is what the process wrote per save (journal, copy,
// records).
func BenchmarkStoreSave(b *testing.B) {
	for _, c := range []struct {
		name            string
		durable, copies bool
	}{{"stepEnd", false, true}, {"inFlight", true, false}, {"note", false, false}} {
		for _, size := range []string{"long", "short"} {
			b.Run(c.name+"/"+size, func(b *testing.B) { benchStoreSave(b, size == "long", c.durable, c.copies) })
		}
	}
}

// shortState is a loop's state a few iterations in, as BenchmarkBuildIteration
// saves it.
func shortState() *State {
	st := freshState()
	st.Loop, st.Shape, st.Phase, st.Iterations, st.AgentRuns = "short", "ralph", PhaseRalph, 5, 5
	st.SetupDone, st.BaselineDone, st.PID, st.Run = true, true, 4242, "20261205T030000-4242"
	st.StartedAt = time.Date(2026, 12, 5, 1, 2, 3, 0, time.UTC)
	st.Records = "/home/user/project/working-records/records/20261205T030000-4242.jsonl"
	st.InFlight = &InFlight{Phase: PhaseRalph, Seq: 6, Transcript: "/home/user/project/working-records/transcripts/6.jsonl",
		PromptFile: "/home/user/project/working-records/prompts/6.md", Started: time.Now().UTC()}
	return st
}

func benchStoreSave(b *testing.B, long, durable, copies bool) {
	b.Setenv("LOOPRINTER_STATE_DIR", b.TempDir())
	dir := b.TempDir()
	priv, err := loopdir.PrivateOf(dir).Ensure()
	if err != nil {
		b.Fatal(err)
	}
	jr, err := statefile.OpenJournal(priv)
	if err != nil {
		b.Fatal(err)
	}
	defer jr.Close()
	rec, err := loopdir.Dir(dir).CreateRecords("bench", "command", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close()
	st := shortState()
	if long {
		st = longState()
	}
	s := &store{st: st, dir: dir, priv: priv, rec: rec, jr: jr, mark: time.Now(), emit: func(record.Event) {}}
	s.setStateRed(Redactor(nil)) // the engine's, memoized as the engine has it
	if err := s.save(true, true); err != nil {
		b.Fatal(err)
	}
	w0, c0 := wchar(), cpuTime()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st.AgentRuns++
		if i%2 == 0 {
			st.Phase = PhaseCycleGate
		} else {
			st.Phase = PhaseBuild
		}
		if err := s.save(durable, copies); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-c0)/float64(time.Microsecond)/float64(b.N), "cpu-us/save")
	b.ReportMetric(float64(wchar()-w0)/float64(b.N), "written-bytes/save")
}

// wchar is the bytes this process has written (/proc/self/io; 0 where
// there is none): the journal's, the public copy's and the records'.
func wchar() int64 {
	data, _ := os.ReadFile("/proc/self/io")
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
