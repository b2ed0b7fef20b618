package loop

import (
	"context"
	"errors"
	"testing"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// The verdicts alone, over a state and a judge of their own: what the
// baseline's results mean for the loop.
func TestVerdictsJudgeTheBaselineAlone(t *testing.T) {
	newVerdicts := func(l *spec.Loop) (*verdicts, *[]string) {
		var stops []string
		st := &State{}
		jd := &judge.Judge{Dir: l.Dir, Priv: t.TempDir(), Spec: func() *spec.Loop { return l }, Emit: func(record.Event) {},
			AddNotVerified: st.addNotVerified}
		return &verdicts{dir: l.Dir, st: st, spec: func() *spec.Loop { return l }, judge: func() *judge.Judge { return jd },
			emit: func(record.Event) {},
			stop: func(reason, summary string) error { stops = append(stops, reason); return errors.New(reason) }}, &stops
	}
	fail := CheckResult{Check: record.Check{Command: "go test ./...", ExitCode: 1}, Lines: []string{"--- FAIL: TestX"}}
	pass := CheckResult{Check: record.Check{Command: "go test ./...", Pass: true}}

	l := &spec.Loop{Dir: t.TempDir(), Shape: spec.ShapeCycle, Verify: []string{"go test ./..."}}
	v, stops := newVerdicts(l)
	if sig, err := v.judgeBaseline(context.Background(), []CheckResult{fail}); err != nil || sig != "" || len(*stops) > 0 {
		t.Fatalf("a failing check goes on: %q %v %v", sig, err, *stops)
	}
	if !v.st.CycleFailed || v.st.ObjectiveFailed {
		t.Fatalf("a verify check failing fails the cycle gate only: cycle %v objective %v", v.st.CycleFailed, v.st.ObjectiveFailed)
	}

	v, stops = newVerdicts(l)
	if _, err := v.judgeBaseline(context.Background(), []CheckResult{pass}); err == nil || (*stops)[0] != ReasonAlreadyPassing {
		t.Fatalf("every check passing stops the loop already passing: %v %v", err, *stops)
	}

	green := &spec.Loop{Dir: t.TempDir(), Shape: spec.ShapeCycle, Verify: []string{"go test ./..."}, AllowPassing: true}
	v, stops = newVerdicts(green)
	if _, err := v.judgeBaseline(context.Background(), []CheckResult{pass}); err == nil || (*stops)[0] != ReasonDone {
		t.Fatalf("allow_passing: DONE, green: %v %v", err, *stops)
	}
	if v.st.CycleGate != "pass" || v.st.ObjectiveGate != "pass" || len(v.st.Evidence) == 0 {
		t.Fatalf("a green loop's gates and evidence: %q %q %q", v.st.CycleGate, v.st.ObjectiveGate, v.st.Evidence)
	}
}

// The state's key of the tree the gates judge changes with every agent
// run, build run and cycle.
func TestGateKeyChangesWithEveryRun(t *testing.T) {
	st := &State{Cycle: 1, AgentRuns: 2, Iterations: 3}
	k := st.gateKey()
	st.AgentRuns++
	if k == st.gateKey() || k != "c1-a2-i3" {
		t.Fatalf("gate key %q, then %q", k, st.gateKey())
	}
}
