package agent

// keepOnlyStdio does nothing on Windows, where a child inherits only the
// handles os/exec gives it.
func keepOnlyStdio() {}
