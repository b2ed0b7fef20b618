package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// The flaky policy a loop file names (flaky:).

// The flaky policies (flaky:).
const (
	FlakyFail       = "fail"
	FlakyRerun      = "rerun"
	FlakyQuarantine = "quarantine"
	// MaxFlakyRuns bounds flaky: rerun N.
	MaxFlakyRuns = 20
)

// ParseFlaky reads a flaky: value: fail, rerun N (2 to MaxFlakyRuns runs
// in all) or quarantine; "" is fail.
func ParseFlaky(v string) (mode string, runs int, err error) {
	f := strings.Fields(v)
	switch {
	case len(f) == 0:
		return FlakyFail, 1, nil
	case len(f) == 1 && (f[0] == FlakyFail || f[0] == FlakyQuarantine):
		return f[0], 1, nil
	case f[0] == FlakyRerun:
		if len(f) != 2 {
			return "", 0, fmt.Errorf("%q: write `rerun N`, N the runs in all a check must pass (2 to %d)", v, MaxFlakyRuns)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 2 || n > MaxFlakyRuns {
			return "", 0, fmt.Errorf("%q: N must be a whole number from 2 to %d (the runs in all a check must pass)", v, MaxFlakyRuns)
		}
		return FlakyRerun, n, nil
	}
	return "", 0, fmt.Errorf("%q is not known (fail, rerun N or quarantine)", v)
}

// FlakyRule is the flaky policy in force and, for rerun, the runs in all.
func (l *Loop) FlakyRule() (mode string, runs int) {
	mode, runs, err := ParseFlaky(l.Flaky)
	if err != nil {
		return FlakyFail, 1
	}
	return mode, runs
}
