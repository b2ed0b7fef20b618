package sandbox

import (
	"os"
	"syscall"
	"time"

	"github.com/looprinter/looprinter/proc"
)

// BecomeSubreaper does nothing on macOS, which has no child subreaper: a
// process an agent leaves behind is re-parented to launchd, and Sweep finds
// it by the engine's mark in its environment (see proc.Members).
func BecomeSubreaper() error { return nil }

// sweepPasses bounds Sweep (see the Linux version).
const sweepPasses = 100

// Sweep SIGKILLs every process of this engine's runs except the pids in
// keep and what descends from them: its descendants, what they left in
// their sessions and groups, and the daemons that carry its mark (see
// proc.Members); it reaps those that are its direct children, and repeats
// until none is left. It returns the pids it killed, nil when there was
// nothing to do. Call it when no command of the caller is running other
// than those in keep.
func Sweep(keep ...int) []int {
	keep = withSpared(keep)
	self := os.Getpid()
	me, ok, _ := proc.Lookup(self)
	if !ok {
		return nil
	}
	mark := proc.OwnerEnv()[0]
	var killed []int
	done := map[int]bool{}
	for pass := 0; pass < sweepPasses; pass++ {
		members, err := proc.Find(self, me.Start, mark)
		if err != nil {
			break
		}
		live, zombies := proc.Victims(members, self, keep)
		if len(live) == 0 && len(zombies) == 0 {
			break
		}
		for _, v := range live {
			if proc.Kill(v.PID, syscall.SIGKILL) == nil && !done[v.PID] {
				done[v.PID] = true
				killed = append(killed, v.PID)
			}
		}
		for _, v := range append(live, zombies...) {
			if v.PPID == self {
				var ws syscall.WaitStatus
				syscall.Wait4(v.PID, &ws, 0, nil)
			}
		}
		if len(live) > 0 && pass > 0 {
			time.Sleep(time.Millisecond)
		}
	}
	return killed
}
