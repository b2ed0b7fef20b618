package sandbox

import (
	"fmt"

	"github.com/looprinter/looprinter/proc"
)

// resolveHere refuses every mode on Windows: no loop runs there, and the
// engine turns this error into BLOCKED when a run starts.
func resolveHere(mode string) (kind string, handled bool, err error) {
	return "", true, fmt.Errorf("sandbox: %w", proc.ErrUnsupported)
}

// seatbeltHere says why Seatbelt cannot run on this platform.
func seatbeltHere() error { return proc.ErrUnsupported }

// kindLines: Windows has no sandbox kind.
func kindLines(func(kind string, avail error, what string) string) []string { return nil }

// Hint is what to do when no sandbox can run here; for `looprinter doctor`.
func Hint() string {
	return "run loops on Linux or macOS: Windows is not supported yet"
}
