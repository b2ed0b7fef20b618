package judge

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// flakyCheck alternates TestFlaky between pass and fail at each run (a
// counter in the loop folder), beside TestOne, which passes; it prints go
// test -v's lines.
const flakyCheck = `n=$(cat n 2>/dev/null || echo 0); echo $((n+1)) > n
echo "=== RUN   TestOne"; echo "--- PASS: TestOne (0.00s)"
echo "=== RUN   TestFlaky"
if [ $((n % 2)) = 1 ]; then echo "--- FAIL: TestFlaky (0.00s)"; echo "    flaky_test.go:9: port busy"; echo FAIL; exit 1; fi
echo "--- PASS: TestFlaky (0.00s)"; echo PASS`

func flakyEvents(evs []record.Event) []record.Event {
	var out []record.Event
	for _, e := range evs {
		if e.Event == record.Flaky {
			out = append(out, e)
		}
	}
	return out
}

func TestFlipped(t *testing.T) {
	a := CheckResult{Failed: []string{"TestA", "TestB"}}
	b := CheckResult{Failed: []string{"TestB", "TestC"}}
	if got := Flipped(a, b); !slices.Equal(got, []string{"TestA", "TestC"}) {
		t.Errorf("Flipped = %v", got)
	}
	if got := Flipped(a, a); len(got) != 0 {
		t.Errorf("Flipped of one result = %v", got)
	}
}

// flaky: rerun N: a check passes only if all N runs pass; a check whose
// result changes is recorded flaky with the test that flipped, and its
// signal says so; a check that fails for real is not called flaky.
func TestRerunFlaky(t *testing.T) {
	j, evs := newJudge(t, &spec.Loop{Flaky: "rerun 3", Sandbox: "off"}) // off: the checks count their runs in the tree
	stable := `echo run >> stable.txt`
	broken := `echo run >> broken.txt; echo "--- FAIL: TestBroken (0.00s)"; exit 1`
	rs := j.RunChecks(context.Background(), "objective", []string{stable, flakyCheck, broken})
	count := func(f string) int {
		data, _ := os.ReadFile(filepath.Join(j.Dir, f))
		return strings.Count(string(data), "run")
	}
	if !rs[0].Pass || count("stable.txt") != 3 {
		t.Errorf("the stable check: pass %v after %d runs, want 3", rs[0].Pass, count("stable.txt"))
	}
	if rs[1].Pass || !strings.HasPrefix(rs[1].Signal, "FLAKY: `") || !strings.Contains(rs[1].Signal, "tests that flipped: TestFlaky") || !strings.Contains(rs[1].Signal, "do not chase a bug that is not there") {
		t.Errorf("the flaky check: pass %v, signal %q", rs[1].Pass, rs[1].Signal)
	}
	if rs[2].Pass || strings.Contains(rs[2].Signal, "FLAKY") || count("broken.txt") != 2 {
		t.Errorf("the broken check: pass %v after %d runs, signal %q", rs[2].Pass, count("broken.txt"), rs[2].Signal)
	}
	fl := flakyEvents(*evs)
	if len(fl) != 1 || fl[0].Kind != "rerun" || fl[0].Gate != "objective" || !slices.Equal(fl[0].Flipped, []string{"TestFlaky"}) {
		t.Fatalf("flaky records %+v", fl)
	}
	if got := j.flakyKnown()[flakyCheck]; !slices.Equal(got, []string{"TestFlaky"}) {
		t.Errorf("kept %v", got)
	}
	// The baseline is not re-run.
	os.Remove(filepath.Join(j.Dir, "stable.txt"))
	j.RunChecks(context.Background(), "baseline", []string{stable})
	if count("stable.txt") != 1 {
		t.Errorf("the baseline ran its check %d times", count("stable.txt"))
	}
}

// A check that passed in the loop folder and fails in the clean room with
// nothing set aside flipped on the same tree: flaky, and the signal says so
// (flaky: fail), or its flipped test is left out and DONE is NOT VERIFIED
// for it (flaky: quarantine).
func TestCleanRoomFlaky(t *testing.T) {
	for _, mode := range []string{"fail", "quarantine"} {
		t.Run(mode, func(t *testing.T) {
			j, evs := newJudge(t, &spec.Loop{Flaky: mode, Sandbox: "off"})
			var nv []string
			j.AddNotVerified = func(s string) { nv = append(nv, s) }
			j.SetAside = func() ([]string, error) { return nil, nil }
			os.WriteFile(filepath.Join(j.Dir, "n"), []byte("0\n"), 0o644)
			gate := j.RunChecks(context.Background(), "objective", []string{flakyCheck})
			if !gate[0].Pass {
				t.Fatalf("the gate's run failed: %q", gate[0].Signal)
			}
			rec, signal := j.JudgeCleanRoom(context.Background(), "objective", []string{flakyCheck})
			fl := flakyEvents(*evs)
			if len(fl) != 1 || fl[0].Kind != "clean_room" || !slices.Equal(fl[0].Flipped, []string{"TestFlaky"}) {
				t.Fatalf("flaky records %+v", fl)
			}
			if mode == "fail" {
				if rec.Pass || !strings.Contains(signal, "clean room: FLAKY") || !strings.Contains(signal, "(flaky: fail)") || strings.Contains(signal, "fail when run again in a clean copy") {
					t.Errorf("pass %v, signal %q", rec.Pass, signal)
				}
				return
			}
			if !rec.Pass || signal != "" || len(nv) != 1 || !strings.Contains(nv[0], "TestFlaky") {
				t.Errorf("quarantine: pass %v, signal %q, not verified %q", rec.Pass, signal, nv)
			}
			// In the loop folder too, the quarantined test alone no
			// longer fails the gate; another failing test does.
			again := j.RunChecks(context.Background(), "objective", []string{flakyCheck})
			if !again[0].Pass {
				t.Errorf("quarantined test failed the gate: %q", again[0].Signal)
			}
			other := `echo "--- FAIL: TestFlaky (0.00s)"; echo "--- FAIL: TestOne (0.00s)"; echo FAIL; exit 1`
			j.NoteFlaky = nil
			j.flaky[other] = []string{"TestFlaky"}
			if rs := j.RunChecks(context.Background(), "objective", []string{other}); rs[0].Pass {
				t.Error("a check failing on a test that never flipped passed")
			}
		})
	}
}

// flaky: fail: a pass of a check seen flaky before is a lucky one: it
// fails a judging gate (not the baseline, setup or a task's checks), and
// a check never seen flaky passes. Under rerun N the N runs decide.
func TestDistrustFlaky(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Flaky: "fail", Sandbox: "off"})
	j.noteFlaky("objective", "clean_room", "sh flaky.sh", []string{"TestFlaky"})
	res := func() []CheckResult {
		return []CheckResult{{Check: record.Check{Command: "sh flaky.sh", Pass: true}}, {Check: record.Check{Command: "sh other.sh", Pass: true}}}
	}
	rs := res()
	j.distrustFlaky("objective", rs)
	if rs[0].Pass || rs[0].Check.Pass || !strings.HasPrefix(rs[0].Signal, "FLAKY: `sh flaky.sh` passed, but it was seen flaky before") || !strings.Contains(rs[0].Signal, "TestFlaky") {
		t.Errorf("the lucky pass: pass %v/%v, signal %q", rs[0].Pass, rs[0].Check.Pass, rs[0].Signal)
	}
	if !rs[1].Pass || rs[1].Signal != "" {
		t.Errorf("a check never seen flaky: pass %v, signal %q", rs[1].Pass, rs[1].Signal)
	}
	for _, gate := range []string{"baseline", "setup", "task"} {
		rs = res()
		j.distrustFlaky(gate, rs)
		if !rs[0].Pass {
			t.Errorf("%s: a flaky check failed", gate)
		}
	}
	j2, _ := newJudge(t, &spec.Loop{Flaky: "rerun 3", Sandbox: "off"})
	j2.noteFlaky("objective", "clean_room", "sh flaky.sh", nil)
	rs = res()
	j2.distrustFlaky("objective", rs)
	if !rs[0].Pass {
		t.Error("rerun 3: the gate's runs decide, not the flip seen before")
	}
}
