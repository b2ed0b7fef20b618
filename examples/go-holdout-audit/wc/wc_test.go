package wc

import "testing"

func TestCount(t *testing.T) {
	if got := Count("hello world"); got != 2 {
		t.Fatalf("Count(%q) = %d, want 2", "hello world", got)
	}
}
