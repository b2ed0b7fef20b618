package sandbox

import "fmt"

// resolveHere settles every mode on macOS: auto and seatbelt are Seatbelt
// (sandbox-exec); bwrap and landlock are Linux's.
func resolveHere(mode string) (kind string, handled bool, err error) {
	switch mode {
	case Off:
		return Off, true, nil
	case Auto, "", Seatbelt:
		if err := seatbeltProbe(); err != nil {
			return "", true, fmt.Errorf("sandbox: seatbelt cannot run here: %v; macOS ships %s, or write `sandbox: off` in the loop file to run agents unconfined", err, sandboxExec)
		}
		return Seatbelt, true, nil
	case Bwrap, Landlock:
		return "", true, fmt.Errorf("sandbox: %s is a Linux sandbox; on macOS write `sandbox: seatbelt` or `sandbox: auto` in the loop file", mode)
	}
	return "", false, nil
}

// seatbeltHere: Seatbelt is this platform's.
func seatbeltHere() error { return nil }

// kindLines are Describe's lines for the kinds of this platform.
func kindLines(line func(kind string, avail error, what string) string) []string {
	return []string{line(Seatbelt, seatbeltProbe(), "sandbox-exec with a profile generated from the loop's policy")}
}

// Hint is what to do when no sandbox can run here; for `looprinter doctor`.
func Hint() string {
	return "macOS ships " + sandboxExec + ": check that it is there and runs; or write `sandbox: off` in the loop file to run agents unconfined"
}
