package ops

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/loop"
)

// A task lists the dependencies it still waits for; one that passed, or
// whose dependencies all passed, waits for nothing.
func TestTaskStatusesWaits(t *testing.T) {
	p := &loop.Plan{Tasks: []loop.Task{
		{ID: "T-001", Passes: true},
		{ID: "T-002", DependsOn: []string{"T-001"}},
		{ID: "T-003", DependsOn: []string{"T-001", "T-002"}},
		{ID: "T-004", Passes: true, DependsOn: []string{"T-003"}},
	}}
	got := taskStatuses(p, &loop.State{}, false)
	want := []string{"", "", "T-002", ""}
	for i, ts := range got {
		if w := strings.Join(ts.Waits, ","); w != want[i] {
			t.Errorf("%s waits for %q, want %q", ts.ID, w, want[i])
		}
	}
}
