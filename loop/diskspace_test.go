package loop

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/looprinter/looprinter/agent"
)

// A disk full before the loop starts: BLOCKED at once, naming the folder
// and "no space left on device", and no agent run is paid for.
func TestDiskFullBeforeAnyRun(t *testing.T) {
	ad := &pinAdapter{results: []agent.Result{resOK}}
	old := freeSpace
	var loopDir string
	freeSpace = func(p string) (uint64, bool) {
		if _, err := os.Stat(p + "/loop.yaml"); err == nil {
			loopDir = p
			return 4096, true
		}
		return 1 << 40, true
	}
	t.Cleanup(func() { freeSpace = old })
	out, _ := pinRun(t, ad, nil, 20*time.Second, nil)
	if out.Reason != ReasonBlocked || !strings.Contains(out.Summary, "no space left on device: "+loopDir+" has 4096 bytes free") {
		t.Fatalf("outcome %s: %q; want BLOCKED: no space left on device: %s has 4096 bytes free", out.Reason, out.Summary, loopDir)
	}
	if n := len(ad.calls()); n != 0 {
		t.Errorf("%d agent runs on a full disk, want none", n)
	}
}

// The disk fills during an agent run (the agent, or its checks, could not
// write): the loop stops BLOCKED on it after that step, instead of taking
// the failures for the agent's and ending NO PROGRESS later.
func TestDiskFullDuringARun(t *testing.T) {
	ad := &pinAdapter{results: []agent.Result{resOK}} // never writes done.txt: the verify check keeps failing
	old := freeSpace
	freeSpace = func(p string) (uint64, bool) {
		if _, err := os.Stat(p + "/loop.yaml"); err == nil && len(ad.calls()) > 0 {
			return 0, true
		}
		return 1 << 40, true
	}
	t.Cleanup(func() { freeSpace = old })
	out, _ := pinRun(t, ad, nil, 20*time.Second, nil)
	if out.Reason != ReasonBlocked || !strings.Contains(out.Summary, "no space left on device: ") || !strings.Contains(out.Summary, "has 0 bytes free") {
		t.Fatalf("outcome %s: %q; want BLOCKED: no space left on device", out.Reason, out.Summary)
	}
	if n := len(ad.calls()); n != 1 {
		t.Errorf("%d agent runs, want 1 (none after the disk filled)", n)
	}
	if out.State.Iterations != 1 {
		t.Errorf("%d attempts in the state, want 1 kept", out.State.Iterations)
	}
}

// A write of the engine's own that failed for want of space (a record, the
// state) stops the loop, naming the file; other write errors do not.
func TestDiskFullEngineWrite(t *testing.T) {
	e := &store{}
	e.noteWriteErr(&os.PathError{Op: "write", Path: "/loop/working-records/x.jsonl", Err: syscall.EIO})
	if why := e.noSpace(); why != "" {
		t.Errorf("an EIO counted as a full disk: %q", why)
	}
	e.noteWriteErr(&os.PathError{Op: "write", Path: "/loop/working-records/x.jsonl", Err: syscall.ENOSPC})
	e.noteWriteErr(&os.PathError{Op: "write", Path: "/loop/working-records/state.json", Err: syscall.ENOSPC})
	why := e.noSpace()
	if !strings.HasPrefix(why, "no space left on device: write /loop/working-records/x.jsonl: no space left on device") {
		t.Errorf("noSpace %q; want the first failed write, with its file", why)
	}
	if !isNoSpace(errors.Join(errors.New("save"), &os.PathError{Err: syscall.EDQUOT})) {
		t.Error("a quota exceeded is not taken for a full disk")
	}
}
