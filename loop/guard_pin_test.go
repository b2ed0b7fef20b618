package loop

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
)

// An agent that edits the same protected test in every run: each edit is
// caught and restored, run after run. The restore makes the file anew (a
// new inode the watch has not seen), so after a tampered run the engine
// must take a new snapshot before the next run; a snapshot kept from before
// the restore would let the second edit through and end the loop DONE.
func TestPinProtectedEditCaughtAgainAfterRestore(t *testing.T) {
	dir := protectedFixture(t, 100)
	out, evs := runShellAgent(t, dir, `sed -i s/FAIL/PASS/ pkg/deep/zz_test.go`, "budget: {iterations: 3}\n")
	mustRestored(t, dir, out, evs)
	n := 0
	for _, v := range violations(evs) {
		if v == "pkg/deep/zz_test.go" {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d violations for pkg/deep/zz_test.go in 3 runs (outcome %s: %s), want one a run", n, out.Reason, out.Summary)
	}
}

// A hostile agent deletes the engine's copies of the protected files (the
// state folder is outside the sandbox-off loop folder but reachable) and
// edits a protected test: the engine cannot restore it, so the loop stops
// BLOCKED and says which file, instead of judging the edited test.
func TestPinProtectedEditThatCannotBeRestoredBlocks(t *testing.T) {
	dir := protectedFixture(t, 10)
	state := t.TempDir()
	script := `find ` + state + ` -type d -name blobs -prune -exec rm -rf {} + ; sed -i s/FAIL/PASS/ pkg/deep/zz_test.go`
	out, evs := runShellAgentIn(t, state, dir, script, "budget: {iterations: 3}\n")
	if out.Reason != ReasonBlocked || !strings.Contains(out.Summary, "cannot restore protected file pkg/deep/zz_test.go") {
		t.Fatalf("outcome %s: %s; want blocked, the file that cannot be restored named", out.Reason, out.Summary)
	}
	if n := len(events(evs, record.AgentStart)); n != 1 {
		t.Errorf("%d agent runs, want 1: no run starts after a failed restore", n)
	}
}
