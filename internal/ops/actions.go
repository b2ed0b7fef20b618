package ops

import (
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/proc"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// RunDirOf is where an entry's loop keeps its files.
func RunDirOf(e Entry) string {
	if e.RunDir != "" {
		return e.RunDir
	}
	return e.Dir
}

// Pause makes a loop wait before its next agent run: it writes the pause
// file, saying who asked (by, e.g. "looprinter pause"). It reports whether
// a run holds the loop now.
func Pause(e Entry, by string) (running bool, err error) {
	p := loopdir.Dir(RunDirOf(e)).Pause()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false, err
	}
	if err := os.WriteFile(p, []byte("paused by "+by+"\n"), 0o644); err != nil {
		return false, err
	}
	live, _ := loopdir.Locked(RunDirOf(e))
	return live, nil
}

// Resume removes a loop's pause file; wasPaused is false when there was none.
func Resume(e Entry) (wasPaused bool, err error) {
	err = os.Remove(loopdir.Dir(RunDirOf(e)).Pause())
	if os.IsNotExist(err) {
		return false, nil
	}
	return err == nil, err
}

// EntryStop is what StopEntry did.
type EntryStop struct {
	StopResult
	Scheduler int // the pid of the scheduler it stopped, if any
}

// StopEntry stops a loop as `looprinter stop` does: its scheduler first
// (SIGTERM, waiting for it to be gone), then a run `start` spawned that
// does not hold the lock yet is given up to five seconds to take it, then
// Stop. The caller sends the stop notification a killed run could not send
// (notify.Killed).
func StopEntry(e Entry, now bool, timeout time.Duration) (EntryStop, Entry, error) {
	var out EntryStop
	if e.SchedulerPID != 0 && IsScheduler(e.SchedulerPID) {
		proc.Kill(e.SchedulerPID, syscall.SIGTERM)
		// Wait for it to be gone before the entry says so: a scheduler that
		// was still starting could otherwise register itself again.
		for deadline := time.Now().Add(5 * time.Second); Alive(e.SchedulerPID) && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		out.Scheduler = e.SchedulerPID
		Update(e, func(x *Entry) { x.SchedulerPID = 0 })
	}
	// A run that start spawned may not hold the lock yet.
	if e.LauncherPID != 0 && Alive(e.LauncherPID) {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if f, err := Load(e.Key); err == nil {
				e = f
			}
			if live, _ := loopdir.Locked(RunDirOf(e)); live || !Alive(e.LauncherPID) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	res, err := Stop(RunDirOf(e), now, timeout)
	out.StopResult = res
	return out, e, err
}

// Detail is everything `status --json NAME` prints about one loop: its
// status, its budget and its last records (tool calls left out).
type Detail struct {
	Status
	Budget      *spec.Budget   `json:"budget,omitempty"`
	LastRecords []record.Event `json:"last_records,omitempty"`
}

// DetailOf reads a loop's detail from its files; l is its loop file, loaded
// (nil when it cannot be).
func DetailOf(e Entry) (Detail, *spec.Loop) {
	// Only the records' ends are read: status takes the same time whatever
	// the loop's history.
	evs, _, _ := loopdir.Dir(RunDirOf(e)).Tail(8, func(ev record.Event) bool { return ev.Event != record.ToolCall })
	return DetailWith(e, evs)
}

// DetailWith is DetailOf for a caller that has read the loop's records
// (ReadAll) already.
func DetailWith(e Entry, evs []record.Event) (Detail, *spec.Loop) {
	d := Detail{Status: Inspect(e)}
	var l *spec.Loop
	if f := e.RunFile; f != "" {
		l, _ = spec.Load(f)
	}
	if l == nil {
		l, _ = spec.Load(e.LoopFile)
	}
	if l != nil {
		d.Budget = &l.Budget
	}
	for i := len(evs) - 1; i >= 0 && len(d.LastRecords) < 8; i-- {
		if evs[i].Event != record.ToolCall {
			d.LastRecords = append([]record.Event{evs[i]}, d.LastRecords...)
		}
	}
	return d, l
}
