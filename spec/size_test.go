package spec

import (
	"strings"
	"testing"
)

// private_budget reads sizes in the usual units, defaults to 1 GiB, and a
// bad one is refused with its line and column.
func TestPrivateBudget(t *testing.T) {
	for in, want := range map[string]int64{"1GiB": 1 << 30, "2G": 2 << 30, "500MB": 500e6, "1.5GiB": 3 << 29, "4096": 4096, "10 KiB": 10 << 10, "1tb": 1e12} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("%q: %d %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1G", "1X", "GiB", "1e400", "1.2.3G", "0.1"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("%q: %d, no error", in, got)
		}
	}
	l, err := Parse([]byte("objective: x\nverify: [\"true\"]\n"), "loop.yaml")
	if err != nil || l.PrivateBudgetBytes() != 1<<30 {
		t.Fatalf("the default: %v %v", l, err)
	}
	_, err = Parse([]byte("objective: x\nverify: [\"true\"]\nprivate_budget: lots\n"), "loop.yaml")
	if err == nil || !strings.Contains(err.Error(), "3:17: private_budget: \"lots\" is not a size") {
		t.Fatalf("a bad size: %v", err)
	}
}
