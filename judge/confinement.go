package judge

import "strings"

// helperPrefix starts the message of looprinter's own check sandbox helper
// when it cannot confine a check (sandbox/check_linux.go, the layer
// helper): it exits 126 before the check's shell starts.
const helperPrefix = "looprinter check sandbox: "

// confinementFailure is why the engine could not confine a check whose
// result r is ("" when it could): exit 126 with the helper's message. The
// check never ran; its exit is the engine's, never the check's, and the
// fix is never the check's (chmod +x).
func confinementFailure(r CheckResult) string {
	if r.ExitCode != 126 {
		return ""
	}
	for _, l := range strings.Split(r.Signal, "\n") {
		if why, ok := strings.CutPrefix(strings.TrimSpace(l), helperPrefix); ok {
			return why
		}
	}
	return ""
}

// confinementMessage is CannotRun's message for a check the engine could
// not confine.
func confinementMessage(command, why string) string {
	return "the check `" + command + "` did not run: looprinter could not confine it (its own sandbox failed, not the check): " + why +
		"\nfix: this is not the check's fault; see \"Where the loop runs\" in docs/loop-file.md for the layouts it refuses, or choose `sandbox: landlock` in the loop file"
}
