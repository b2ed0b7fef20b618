package redact

import (
	"fmt"
	"strings"
	"testing"
)

// A redactor that remembers its results redacts exactly as the one it was
// made from: the first time, from memory, and after its memory started
// over; a secret is never let through from memory.
func TestMemoRedactsAsTheRedactorDoes(t *testing.T) {
	r := testRedactor()
	m := r.Memo()
	ins := []string{
		"key " + fakeAnthropic + " end",
		"MY_SERVICE_TOKEN=" + fakeService,
		"nothing secret here",
		"gh " + fakeGitHub,
	}
	for round := 0; round < 3; round++ {
		for _, in := range ins {
			if got, want := m.String(in), r.String(in); got != want {
				t.Fatalf("round %d: memo %q, redactor %q", round, got, want)
			}
		}
	}
	if strings.Contains(m.String(ins[0]), fakeAnthropic) {
		t.Fatal("a secret came back from memory")
	}
	// Past its bound, the memory starts over; results do not change.
	filler := strings.Repeat("x", 4000)
	for i := 0; i < 2*memoMaxBytes/len(filler); i++ {
		m.String(fmt.Sprintf("%d %s", i, filler))
	}
	if m.memo.bytes > memoMaxBytes {
		t.Fatalf("the memo holds %d bytes, over its bound of %d", m.memo.bytes, memoMaxBytes)
	}
	for _, in := range ins {
		if got, want := m.String(in), r.String(in); got != want {
			t.Fatalf("after the memo started over: %q, want %q", got, want)
		}
	}
	// Long strings are redacted but never kept.
	long := strings.Repeat("y", memoMaxString+1) + fakeGitHub
	if got := m.String(long); strings.Contains(got, fakeGitHub) {
		t.Fatal("a long string's secret came through")
	}
	if _, ok := m.memo.get(long); ok {
		t.Fatal("a string over the memo's bound was kept")
	}
	// Value goes through the memo too.
	type st struct{ A, B string }
	v := Value(m, st{A: ins[0], B: "plain"})
	if strings.Contains(v.A, fakeAnthropic) || v.B != "plain" {
		t.Fatalf("Value through the memo: %+v", v)
	}
	if Off().Memo() != nil {
		t.Fatal("the memo of no redactor is no redactor")
	}
}
