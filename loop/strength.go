package loop

import (
	"context"
	"fmt"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/sandbox"
)

// The engine's side of verify_strength (judge/strength.go): the loop's
// starting tree, written once before the first agent run, and what a pass
// below the minimum means for the loop.

// strengthBase writes the loop folder's tree as a git tree object
// before any agent run, when verify_strength is on: the lines changed
// since are the ones a pass mutates. Outside a git repository there is
// none, and the pass says so.
func (v *verdicts) strengthBase(ctx context.Context) {
	l := v.spec()
	if !l.VerifyStrength.On || v.st.StrengthBase != "" || confine.GitDir(l) == "" {
		return
	}
	if tree, err := safegit.SnapshotTree(ctx, v.dir); err == nil {
		v.st.StrengthBase = tree
	}
}

// strength runs the strength pass after the clean room and the audit
// passed. It returns a failure signal for the next prompt ("" when the
// pass does not keep the loop from DONE), or a stop: NOT VERIFIED when the
// checks catch fewer mutants than verify_strength.min and the loop cannot
// go on (no build run left, or no better than the pass before).
func (v *verdicts) strength(ctx context.Context, cmds []string) (string, error) {
	l := v.spec()
	vs := l.VerifyStrength
	if !vs.On {
		return "", nil
	}
	kind, _ := sandbox.Resolve(l.Sandbox)
	// The files the agent runs changed, when the list holds them all: only
	// they are compared with the starting tree (O(change)).
	var paths []string
	if v.st.TouchedLeftOut == 0 && len(v.st.Touched) > 0 {
		paths = append(paths, v.st.Touched...)
	}
	s := v.judge().Strength(ctx, judge.StrengthOptions{
		Base: v.st.StrengthBase, Cmds: cmds, Kind: kind, Min: vs.Min, Budget: vs.Budget.D(), MaxMutants: vs.MaxMutants,
		Skip: v.judge().IsHoldout, Paths: paths,
	})
	if ctx.Err() != nil {
		return "", v.stop(ReasonInterrupted, "interrupted during the verify_strength pass")
	}
	prev := v.st.Strength
	v.st.Strength = s
	line := record.StrengthLine(s)
	if s.Error != "" {
		v.st.addNotVerified(line)
		if vs.Min > 0 {
			return "", v.stop(ReasonNotVerified, line+": verify_strength.min cannot be checked")
		}
		return "", nil
	}
	v.st.Evidence = append(v.st.Evidence, line)
	if s.Pass {
		return "", nil
	}
	if len(s.Survivors) == 0 {
		// Nothing judged (no mutant of the changed lines, or none the
		// checks could run on): min cannot be shown to hold.
		return "", v.stop(ReasonNotVerified, line+": no mutant of the changed lines was judged, so verify_strength.min cannot be shown to hold (a change in a language without mutation operators, or mutants that did not build or were not run)")
	}
	better := prev == nil || prev.Error != "" || s.Score > prev.Score
	if v.st.Iterations < l.Budget.Iterations && better {
		return judge.StrengthPrompt(s, 20), nil
	}
	why := "no build run is left to strengthen them"
	if !better {
		why = "the last attempt to strengthen them did not catch more"
	}
	return "", v.stop(ReasonNotVerified, fmt.Sprintf("%s; %s. Survivors: %s", line, why, judge.SurvivorList(s, 5)))
}

// StrengthLines are the last verify_strength pass of a state for status
// and the report (judge.StrengthLines).
func StrengthLines(st *State, most int) []string {
	if st == nil {
		return nil
	}
	return judge.StrengthLines(st.Strength, most)
}
