package loop

import "time"

// cpuTime is not measured on Windows.
func cpuTime() time.Duration { return 0 }

// syncDisks does nothing on Windows.
func syncDisks() {}
