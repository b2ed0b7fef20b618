package judge

import (
	"context"
	"slices"

	"github.com/looprinter/looprinter/record"
)

// No check runs twice for one answer. A command in both verify and
// objective_verify (natural for a bug fix: the project's test command)
// runs once at the baseline (spec.Loop.GateChecks lists it once), and the
// objective gate, which follows a passing cycle gate on the same tree with
// no agent run between, takes the cycle gate's run of it instead of running
// it again. The records mark such a result shared.

// sharedRun is a gate's results kept for the next gate on the same tree.
type sharedRun struct {
	key     string
	results map[string]CheckResult
}

// KeepForNextGate keeps a gate's results, as they came from the checks
// (before any verdict of the gate changed them), for the next gate on the
// same tree: key names the tree (the engine's count of agent runs, say);
// a later gate with another key runs its checks again.
func (j *Judge) KeepForNextGate(key string, results []CheckResult) {
	m := make(map[string]CheckResult, len(results))
	for _, r := range results {
		m[r.Command] = cloneResult(r)
	}
	j.shared = &sharedRun{key: key, results: m}
}

// RunGate runs a gate's checks, in order, taking from the results kept by
// KeepForNextGate with the same key those of the same commands (marked
// Shared) instead of running them again. The kept results are used once.
func (j *Judge) RunGate(ctx context.Context, gate, key string, cmds []string) []CheckResult {
	kept := j.shared
	j.shared = nil
	var run []string
	for _, c := range cmds {
		if kept == nil || kept.key != key {
			run = append(run, c)
			continue
		}
		if _, ok := kept.results[c]; !ok {
			run = append(run, c)
		}
	}
	var fresh []CheckResult
	if len(run) > 0 {
		fresh = j.RunChecks(ctx, gate, run)
	}
	out := make([]CheckResult, 0, len(cmds))
	for _, c := range cmds {
		if !slices.Contains(run, c) {
			r := cloneResult(kept.results[c])
			r.Shared = true
			out = append(out, r)
			continue
		}
		if len(fresh) == 0 {
			break // interrupted
		}
		out = append(out, fresh[0])
		fresh = fresh[1:]
	}
	return out
}

// MarkShared marks the results of commands in both verify and
// objective_verify: one run answers for both.
func (j *Judge) MarkShared(results []CheckResult) {
	l := j.spec()
	for i := range results {
		if l.SharedCheck(results[i].Command) {
			results[i].Shared = true
		}
	}
}

func cloneResult(r CheckResult) CheckResult {
	r.Lines = slices.Clone(r.Lines)
	if r.Check.Tests != nil {
		t := *r.Check.Tests
		r.Check.Tests = &t
	}
	return r
}

// SharedCount is how many results are shared.
func SharedCount(rs []record.Check) int {
	n := 0
	for _, r := range rs {
		if r.Shared {
			n++
		}
	}
	return n
}
