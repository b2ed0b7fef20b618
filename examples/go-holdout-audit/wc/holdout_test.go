package wc

import "testing"

// Holdout tests: the agent never sees this file (loop.yaml's holdout), and
// git ignores it (.gitignore), so no commit carries it where the agent could
// read it.

func TestHoldoutEmpty(t *testing.T) {
	if got := Count(""); got != 0 {
		t.Fatalf("Count(\"\") = %d, want 0", got)
	}
}

func TestHoldoutSpaces(t *testing.T) {
	if got := Count("  a \t b\n\nc  "); got != 3 {
		t.Fatalf("Count with runs of blanks = %d, want 3", got)
	}
}

func TestHoldoutOne(t *testing.T) {
	if got := Count("word"); got != 1 {
		t.Fatalf("Count(%q) = %d, want 1", "word", got)
	}
}
