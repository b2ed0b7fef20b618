package judge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

// A command in both verify and objective_verify runs once for one answer:
// the objective gate takes the cycle gate's run on the same tree (marked
// shared), runs its other checks, and runs everything again on another
// tree (another key) or once the kept results were used.
func TestRunGateShares(t *testing.T) {
	shared := `echo run >> runs.txt; exit 0`
	l := &spec.Loop{Sandbox: "off", Verify: []string{shared, "true"}, ObjectiveVerify: []string{shared, `echo obj >> runs.txt`}} // off: the checks count their runs in the tree
	j, _ := newJudge(t, l)
	if got := l.GateChecks(); len(got) != 3 {
		t.Fatalf("GateChecks lists the shared command twice: %q", got)
	}
	runs := func() string {
		data, _ := os.ReadFile(filepath.Join(j.Dir, "runs.txt"))
		return strings.ReplaceAll(string(data), "\n", " ")
	}
	ctx := context.Background()
	cycle := j.RunChecks(ctx, "cycle", l.Verify)
	j.KeepForNextGate("k1", cycle)
	cycle[0].Pass, cycle[0].Lines = false, append(cycle[0].Lines, "changed by the cycle gate's verdict")
	obj := j.RunGate(ctx, "objective", "k1", l.ObjectiveVerify)
	if runs() != "run obj " {
		t.Fatalf("runs %q: the shared check ran again", runs())
	}
	if len(obj) != 2 || obj[0].Command != shared || !obj[0].Shared || !obj[0].Pass || len(obj[0].Lines) != 0 || obj[1].Shared || !obj[1].Pass {
		t.Fatalf("objective results %+v", obj)
	}
	if !strings.Contains(strings.Join(Evidence("objective", obj, nil), "\n"), "(shared: in verify and objective_verify, run once for both)") {
		t.Error("the evidence does not say the check was shared")
	}
	// Used once: the next gate runs it again.
	j.RunGate(ctx, "objective", "k1", l.ObjectiveVerify)
	// Another tree: it runs again.
	j.KeepForNextGate("k1", cycle)
	again := j.RunGate(ctx, "objective", "k2", l.ObjectiveVerify)
	if runs() != "run obj run obj run obj " || again[0].Shared {
		t.Fatalf("runs %q, shared %v: kept results were used for another tree", runs(), again[0].Shared)
	}
	// The baseline marks what it ran once for both lists.
	base := j.RunChecks(ctx, "baseline", l.GateChecks())
	j.MarkShared(base)
	if !base[0].Shared || base[1].Shared || base[2].Shared {
		t.Errorf("baseline marks %v %v %v", base[0].Shared, base[1].Shared, base[2].Shared)
	}
}
