package sandbox

import (
	"errors"
	"fmt"
)

// resolveHere settles the modes Linux treats apart: seatbelt, macOS's.
func resolveHere(mode string) (kind string, handled bool, err error) {
	if mode == Seatbelt {
		return "", true, fmt.Errorf("sandbox: seatbelt is macOS's sandbox and cannot run on Linux; choose `sandbox: auto`, `sandbox: bwrap` or `sandbox: landlock` in the loop file")
	}
	return "", false, nil
}

// seatbeltHere says why Seatbelt cannot run on this platform.
func seatbeltHere() error { return errors.New("Seatbelt is macOS's sandbox") }

// kindLines are Describe's lines for the kinds of this platform.
func kindLines(line func(kind string, avail error, what string) string) []string {
	return []string{
		line(Bwrap, bwrapProbe(), bwrapWhat()),
		line(Landlock, landlockProbe(), landlockWhat()),
	}
}

// Hint is what to do when no sandbox can run here; for `looprinter doctor`.
func Hint() string {
	return "install bubblewrap (apt-get install bubblewrap) or use a kernel with Landlock; or write `sandbox: off` in the loop file to run agents unconfined"
}
