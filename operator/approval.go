package operator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// Approval is the operator's OK to a loop's first plan (plan.approve),
// kept in the engine's private folder: no agent run can write it.
type Approval struct {
	By string    `json:"by"` // "looprinter approve", "mcp", "serve (token …)"
	At time.Time `json:"at"`
}

func approvalPath(loopDir string) string { return filepath.Join(dir(loopDir), "plan-approval.json") }

// PutApproval stores the OK to the plan; the engine takes it while it
// waits.
func PutApproval(loopDir, by string) error {
	return writeJSON(loopDir, approvalPath(loopDir), Approval{By: by, At: time.Now().UTC()})
}

// TakeApproval returns the stored OK and removes it; ok is false when
// there is none, or when it was given before since (an OK to an earlier
// wait).
func TakeApproval(loopDir string, since time.Time) (Approval, bool) {
	var a Approval
	data, err := readPrivate(approvalPath(loopDir))
	if err != nil {
		return a, false
	}
	os.Remove(approvalPath(loopDir))
	if json.Unmarshal(data, &a) != nil || a.At.Before(since.Add(-time.Second)) {
		return Approval{}, false
	}
	return a, true
}
