package loop

import "testing"

// A best-of keeps the passing attempt the checks pin best, then the
// smallest: a special case (small, its constants' mutants survive) loses
// to an honest fix; an unmeasured attempt ranks below a measured one; with
// no strength known the smallest wins as before.
func TestPickBestByStrength(t *testing.T) {
	special := attemptResult{Index: 0, Pass: true, Change: changeSize{Lines: 6, Files: 1}, Caught: 1, Judged: 4}
	honest := attemptResult{Index: 1, Pass: true, Change: changeSize{Lines: 8, Files: 1}, Caught: 4, Judged: 4}
	if best, ok := pickBest([]attemptResult{special, honest}); !ok || best != 1 {
		t.Fatalf("pickBest = %d, %v; want the honest attempt (1)", best, ok)
	}
	unmeasured := attemptResult{Index: 2, Pass: true, Change: changeSize{Lines: 1, Files: 1}}
	if best, _ := pickBest([]attemptResult{unmeasured, special}); best != 1 {
		t.Fatalf("pickBest = %d; a measured attempt ranks over an unmeasured one", best)
	}
	a := attemptResult{Index: 0, Pass: true, Change: changeSize{Lines: 9, Files: 1}, Caught: 2, Judged: 4}
	b := attemptResult{Index: 1, Pass: true, Change: changeSize{Lines: 5, Files: 1}, Caught: 3, Judged: 6}
	if best, _ := pickBest([]attemptResult{a, b}); best != 1 {
		t.Fatalf("pickBest = %d; equal strength: the smaller change", best)
	}
	a.Judged, a.Caught, b.Judged, b.Caught = 0, 0, 0, 0
	if best, _ := pickBest([]attemptResult{a, b}); best != 1 {
		t.Fatalf("pickBest = %d; unmeasured: the smaller change", best)
	}
	if n := strengthNote(honest); n != "; the checks caught 4 of 4 mutants of its lines" {
		t.Fatalf("strengthNote = %q", n)
	}
}
