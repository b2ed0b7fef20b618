//go:build !linux

package ops

import "github.com/looprinter/looprinter/proc"

// Alive says whether pid is a live process (not a zombie).
func Alive(pid int) bool { return proc.Alive(pid) }

// lockHeldBy: no platform but Linux lists the locks a process holds
// (macOS's only way is lsof); known is false, and isEngine falls back to
// asking whether pid runs looprinter.
func lockHeldBy(pid int, file string) (held, known bool) { return false, false }

// lockHolders: see lockHeldBy.
func lockHolders(file string) (map[int]bool, bool) { return nil, false }

// readProcs reads the parent, group and session of every live process from
// the process table.
func readProcs() map[int]procInfo {
	out := map[int]procInfo{}
	table, err := proc.Table()
	if err != nil {
		return out
	}
	for _, e := range table {
		if !e.Zombie {
			out[e.PID] = procInfo{ppid: e.PPID, pgrp: e.PGID, sid: e.SID}
		}
	}
	return out
}
