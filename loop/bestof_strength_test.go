package loop

import (
	"github.com/looprinter/looprinter/wave"
	"testing"
)

// A best-of keeps the passing attempt the checks pin best, then the
// smallest: a special case (small, its constants' mutants survive) loses
// to an honest fix; an unmeasured attempt ranks below a measured one; with
// no strength known the smallest wins as before.
func TestPickBestByStrength(t *testing.T) {
	special := wave.Attempt{Index: 0, Pass: true, Change: wave.Change{Lines: 6, Files: 1}, Caught: 1, Judged: 4}
	honest := wave.Attempt{Index: 1, Pass: true, Change: wave.Change{Lines: 8, Files: 1}, Caught: 4, Judged: 4}
	if best, ok := wave.PickBest([]wave.Attempt{special, honest}); !ok || best != 1 {
		t.Fatalf("pickBest = %d, %v; want the honest attempt (1)", best, ok)
	}
	unmeasured := wave.Attempt{Index: 2, Pass: true, Change: wave.Change{Lines: 1, Files: 1}}
	if best, _ := wave.PickBest([]wave.Attempt{unmeasured, special}); best != 1 {
		t.Fatalf("pickBest = %d; a measured attempt ranks over an unmeasured one", best)
	}
	a := wave.Attempt{Index: 0, Pass: true, Change: wave.Change{Lines: 9, Files: 1}, Caught: 2, Judged: 4}
	b := wave.Attempt{Index: 1, Pass: true, Change: wave.Change{Lines: 5, Files: 1}, Caught: 3, Judged: 6}
	if best, _ := wave.PickBest([]wave.Attempt{a, b}); best != 1 {
		t.Fatalf("pickBest = %d; equal strength: the smaller change", best)
	}
	a.Judged, a.Caught, b.Judged, b.Caught = 0, 0, 0, 0
	if best, _ := wave.PickBest([]wave.Attempt{a, b}); best != 1 {
		t.Fatalf("pickBest = %d; unmeasured: the smaller change", best)
	}
	if n := wave.StrengthNote(honest); n != "; the checks caught 4 of 4 mutants of its lines" {
		t.Fatalf("strengthNote = %q", n)
	}
}
