package judge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/looprinter/looprinter/loopdir"
)

// A wave's runs judged at once: run k of a wave is judged, before any run
// is applied, on the tree the applies of runs 0..k would leave. The engine
// lays that tree's change over the loop folder as one upper folder of its
// own (its state folder, which no check sees); PrefixChecks runs the
// checks RunChecks would run, in the same box but for that folder laid
// under the box's own layer (as JudgeAttempt lays an attempt's), and
// nothing more: the judge's notes (flaky checks, quarantine, runs with no
// tests) are RunChecksFrom's once the run is applied, on the tree as it
// is. The loop folder and the upper folder are never written.

// PrefixChecks runs cmds as RunChecks(gate) runs them before its notes,
// with upper laid over the loop folder; name names the checks' output
// files (the run's task). A check whose command holds "!" is not one
// PrefixChecks can run as RunChecks does (a negated check is judged on
// the folder itself): PrefixOK says so.
func (j *Judge) PrefixChecks(ctx context.Context, gate, name string, cmds []string, upper string) []CheckResult {
	dir := loopdir.Dir(j.Dir).Checks()
	os.MkdirAll(dir, 0o700)
	stamp := time.Now().UTC().Format("20060102T150405.000")
	cycle, iteration := j.stamp()
	logPath := func(i int) string {
		return filepath.Join(dir, fmt.Sprintf("%s-c%d-i%d-%s-%s-%d.log", stamp, cycle, iteration, gate, safeName(name), i+1))
	}
	var r CheckRequest
	if len(j.holdouts) == 0 {
		// runVisibleChecks' request.
		l := j.spec()
		r = CheckRequest{Loop: l, Cmds: cmds, Env: j.checkEnv(), Redactor: j.redactor(l), LogPath: logPath, Note: j.noteConfinement}
	} else {
		r = j.request(j.holdouts, cmds, logPath)
	}
	return attemptChecks(ctx, r, upper)
}

// PrefixOK says whether cmds can be run by PrefixChecks with the results
// RunChecks would give on the same tree: not when one is negated (its
// quiet grep's missing file is looked for in the folder itself).
func PrefixOK(cmds []string) bool {
	for _, c := range cmds {
		if strings.Contains(c, "!") {
			return false
		}
	}
	return len(cmds) > 0
}
