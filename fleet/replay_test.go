package fleet

import (
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// The workflow must replay the histories recorded by the server-backed
// tests (internal/fleetdev, LOOPRINTER_RECORD_HISTORIES=1): one per shape
// (cycle, ralph, review), a budget stop, a pause, a continued-as-new run. A change to the workflow
// that would break loops already running fails here; such a change needs
// workflow.GetVersion, then new histories.
func TestReplayRecordedHistories(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if len(files) < 4 {
		t.Fatalf("%d recorded histories in testdata/histories, want one per shape and more", len(files))
	}
	for _, shape := range []string{"cycle", "ralph", "review"} {
		if _, err := os.Stat(filepath.Join("testdata", "histories", shape+".json")); err != nil {
			t.Errorf("no recorded history of a %s loop: %v", shape, err)
		}
	}
	for _, f := range files {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(LoopWorkflow, workflow.RegisterOptions{Name: WorkflowName})
		if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}
