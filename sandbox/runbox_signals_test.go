//go:build linux

package sandbox

import (
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A box's start is not taken for its end when the engine takes signals
// meanwhile: the wait for the box's first answer has a timeout, which
// makes a receive end with EINTR on any signal (a child's end, the Go
// runtime's own SIGURG), and that once turned run boxes off for the whole
// process (CI, as nobody: "the box ended" 40 ms after the start). Twenty
// boxes start while the process is sent SIGURG every 50 µs.
func TestRunBoxStartsUnderSignals(t *testing.T) {
	_, p, _ := boxLayout(t)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			syscall.Kill(os.Getpid(), syscall.SIGURG)
			time.Sleep(50 * time.Microsecond)
		}
	}()
	defer func() { stop.Store(true); <-done }()
	for i := 0; i < 20; i++ {
		CloseRunBoxes()
		out, code, _ := boxedRun(t, p, "echo ok", nil)
		if code != 0 {
			t.Fatalf("run %d: %d %s", i, code, out)
		}
	}
}
