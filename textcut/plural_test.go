package textcut

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n          int
		what, want string
	}{{1, "build run", "1 build run"}, {2, "build run", "2 build runs"}, {0, "run", "0 runs"}, {3, "process", "3 processes"}, {1, "process", "1 process"}} {
		if got := Plural(c.n, c.what); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.what, got, c.want)
		}
	}
}
