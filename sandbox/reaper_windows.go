package sandbox

import "github.com/looprinter/looprinter/proc"

// BecomeSubreaper fails on Windows, where no loop runs.
func BecomeSubreaper() error { return proc.ErrUnsupported }

// Sweep does nothing on Windows: no agent was started.
func Sweep(keep ...int) []int { return nil }
