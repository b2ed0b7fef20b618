package serve

import "testing"

// The loop list's filter: by state (running or finished) and by text.
func TestFilterRows(t *testing.T) {
	rows := []Row{
		{Key: "a1", Name: "fix-tests", State: "running", Live: true},
		{Key: "b2", Name: "docs", State: "finished", Outcome: "DONE"},
		{Key: "c3", Name: "lint", State: "finished", Outcome: "NO PROGRESS"},
	}
	names := func(rs []Row) (out []string) {
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	for _, c := range []struct {
		state, q string
		want     []string
	}{
		{"", "", []string{"fix-tests", "docs", "lint"}},
		{"running", "", []string{"fix-tests"}},
		{"finished", "", []string{"docs", "lint"}},
		{"", "DOC", []string{"docs"}},
		{"finished", "progress", []string{"lint"}},
		{"running", "docs", nil},
	} {
		got := names(filterRows(rows, c.state, c.q))
		if len(got) != len(c.want) {
			t.Errorf("state %q q %q: %v, want %v", c.state, c.q, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("state %q q %q: %v, want %v", c.state, c.q, got, c.want)
			}
		}
	}
}
