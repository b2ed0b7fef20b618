package sandbox

import "sync"

var spared struct {
	sync.Mutex
	pids map[int]int
}

// Spare keeps pid, a child process its starter waits for itself (the
// engine's own git update of the index, running beside an agent run), out
// of every Sweep until release is called: it is neither killed nor reaped.
func Spare(pid int) (release func()) {
	spared.Lock()
	if spared.pids == nil {
		spared.pids = map[int]int{}
	}
	spared.pids[pid]++
	spared.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			spared.Lock()
			if spared.pids[pid]--; spared.pids[pid] <= 0 {
				delete(spared.pids, pid)
			}
			spared.Unlock()
		})
	}
}

// withSpared is keep and the pids Spare holds.
func withSpared(keep []int) []int {
	spared.Lock()
	defer spared.Unlock()
	out := append([]int(nil), keep...)
	for pid := range spared.pids {
		out = append(out, pid)
	}
	return out
}
