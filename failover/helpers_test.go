package failover

import (
	"os"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/testenv"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// TestMain keeps this package's tests off the user's own looprinter state
// (registry, logs, engine folders): see internal/testenv.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// testState is the part of the engine's state a Switch keeps its records
// and reads its counters in, as a fresh state has it (cycle 1).
type testState struct {
	Failover   *State
	Escalation *Escalation
	Cycle      int
	SameCount  int
}

// testRunner is a Switch over a testState, under the names the engine's
// runner gives its methods (loop/failover.go), so that the tests moved
// from the engine read as they did there.
type testRunner struct {
	*Switch
	st *testState
}

func newTestRunner(l *spec.Loop, dir string, emit func(record.Event)) *testRunner {
	st := &testState{Cycle: 1}
	return &testRunner{Switch: &Switch{Spec: func() *spec.Loop { return l }, Dir: dir, Emit: emit,
		Failover: &st.Failover, Escalation: &st.Escalation, Cycle: &st.Cycle, SameCount: &st.SameCount}, st: st}
}

func (r *testRunner) spec() *spec.Loop { return r.Spec() }

func (r *testRunner) chooseAgent(phase, task string, a spec.Agent) spec.Agent {
	return r.Choose(phase, task, a)
}

func (r *testRunner) failoverOnLimit(phase, task string, first, cur spec.Agent, wait time.Duration) (spec.Agent, time.Duration, bool) {
	return r.OnLimit(phase, task, first, cur, wait)
}

func (r *testRunner) escalate(phase, task string, first, a spec.Agent) spec.Agent {
	return r.Escalate(phase, task, first, a)
}

func agentKey(a spec.Agent) string { return Key(a) }

// EscalationLines are st's escalations (loop.EscalationLines).
func EscalationLines(st *testState) []string { return Lines(st.Escalation) }
