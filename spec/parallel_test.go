package spec

import (
	"strings"
	"testing"
)

// parallel: defaults to 1; 0, negatives and more than MaxParallel are
// refused where they are written; above 1 it is refused with the reason
// (only the cycle shape; this version runs builds one at a time), never
// accepted and run one at a time in silence.
func TestParallel(t *testing.T) {
	l, err := Parse([]byte("objective: x\n"), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if l.Parallel != 1 {
		t.Fatalf("parallel defaults to %d, want 1", l.Parallel)
	}
	if l, err := Parse([]byte("objective: x\nparallel: 1\n"), "loop.yaml"); err != nil || l.Parallel != 1 {
		t.Fatalf("parallel: 1: %v", err)
	}
	problemAt(t, "objective: x\nparallel: -2\n", 2, 11, "parallel: -2: it must be at least 1")
	problemAt(t, "objective: x\nparallel: 99\n", 2, 11, "parallel: 99: at most 16 build runs")
	problemAt(t, "objective: x\nparallel: many\n", 2, 11, "parallel")
	problemAt(t, "objective: x\nshape: ralph\nverify: [\"true\"]\nparallel: 2\n", 4, 11, "only the cycle shape runs build runs at once")
	for _, src := range []string{"objective: x\nparallel: 3\n", "objective: x\nsandbox: landlock\nparallel: 2\n", "objective: x\nsandbox: {mode: \"off\"}\nparallel: 2\n"} {
		if _, err := Parse([]byte(src), "loop.yaml"); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
	l, err = Parse([]byte("objective: x\nparallel: 3\n"), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w := l.ParallelWarning("bwrap", true); w != "" {
		t.Errorf("bwrap with layers: %q", w)
	}
	if w := l.ParallelWarning("landlock", false); !strings.Contains(w, "one at a time here: sandbox landlock gives no run a copy-on-write layer") {
		t.Errorf("landlock: %q", w)
	}
	if w := l.ParallelWarning("off", false); !strings.Contains(w, "sandbox off") {
		t.Errorf("off: %q", w)
	}
}
