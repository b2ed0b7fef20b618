package judge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
)

// Best of N: each attempt of a task ran on a copy-on-write layer of its
// own over the unchanged loop folder. JudgeAttempt runs the task's checks
// on a view of the folder with that layer laid over it, in the judge's own
// sandbox: under bubblewrap the attempt's upper folder is a lower layer of
// the check box's view (sandbox.CheckBoxOptions.Lower), elsewhere a copy
// of the folder with the layer applied to the copy. The loop folder and
// the layer are never written: what a check writes lands in the box's
// throw-away layer, and neither the engine's state folder (where every
// attempt's layer lives) nor another attempt's layer is in a check's
// sight.

// AttemptOptions say which attempt to judge.
type AttemptOptions struct {
	// Task is the task's id; Index the attempt (from 0). They name the
	// checks' output files.
	Task  string
	Index int
	// Upper is the attempt's layer's upper folder (absolute).
	Upper string
	// Cmds are the checks that judge the task (the loop's gate checks);
	// none pass.
	Cmds []string
	// Baseline, under verify_baseline: new-only, is each check's
	// normalized failure lines before the loop: a check failing only with
	// those counts as passing for the attempt (no note is kept: only the
	// kept attempt's verdict reaches the loop's).
	Baseline map[string][]string
}

// AttemptVerdict is an attempt's verdict on its own layer.
type AttemptVerdict struct {
	Pass    bool
	Results []CheckResult
	// Signal is the failing checks' output for the next prompt ("" when
	// it passed).
	Signal string
}

// JudgeAttempt runs o.Cmds on the loop folder with the attempt's layer
// laid over it, confined, with the holdout files out of sight, and returns
// the verdict. A check that cannot run (no layer can be read, no box can
// be made) fails closed.
func (j *Judge) JudgeAttempt(ctx context.Context, o AttemptOptions) AttemptVerdict {
	j.flush()
	dir := loopdir.Dir(j.Dir).Checks()
	os.MkdirAll(dir, 0o700)
	stamp := time.Now().UTC().Format("20060102T150405.000")
	cycle, iteration := j.stamp()
	logPath := func(i int) string {
		return filepath.Join(dir, fmt.Sprintf("%s-c%d-i%d-attempt-%s-%d-%d.log", stamp, cycle, iteration, safeName(o.Task), o.Index+1, i+1))
	}
	l := j.spec()
	rs := attemptChecks(ctx, j.request(j.holdouts, o.Cmds, logPath), o.Upper)
	if l.VerifyBaseline == "new-only" {
		excuseBaseline(rs, o.Baseline)
	}
	// No checks: nothing fails (as a build run without task checks, the
	// run's own mark and target decide, which the engine judges).
	v := AttemptVerdict{Results: rs, Pass: len(rs) == len(o.Cmds) && AllPass(rs) && ctx.Err() == nil}
	if !v.Pass {
		v.Signal = FailureSignal(nil, rs)
		if v.Signal == "" {
			v.Signal = "the attempt's checks did not run to the end"
		}
	}
	return v
}

// safeName keeps a task id fit for a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' {
			return r
		}
		return '_'
	}, s)
}

// excuseBaseline is ApplyBaseline for an attempt, without the judge's
// notes: a failing check whose failure lines all failed before the loop
// passes.
func excuseBaseline(rs []CheckResult, baseline map[string][]string) {
	for i := range rs {
		r := &rs[i]
		old, ok := baseline[r.Command]
		if r.Pass || !ok {
			continue
		}
		fresh := newFailures(r.Lines, old)
		r.Baseline = true
		if len(fresh) == 0 {
			r.Pass, r.Signal = true, ""
		} else {
			r.Lines, r.Signal = fresh, strings.Join(fresh, "\n")
		}
	}
}

// attemptChecks runs r's checks with the layer upper laid over its tree.
func attemptChecks(ctx context.Context, r CheckRequest, upper string) []CheckResult {
	if len(r.Cmds) == 0 {
		return nil
	}
	if fi, err := os.Stat(upper); err != nil || !fi.IsDir() || !filepath.IsAbs(upper) {
		return failAll(r.Cmds, r.LogPath, fmt.Sprintf("the attempt's layer %s is not a folder", upper))
	}
	r.Lower = upper
	return Check(ctx, r)
}

// layOnto applies the layer upper to dst (a copy of its tree) as overlayfs
// would show it: written files and links placed, whiteouts removed,
// replaced folders emptied first. Paths in skip stay out.
func layOnto(upper, dst string, skip map[string]bool) error {
	entries, err := sandbox.LayerEntries(upper)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if skipped(e.Rel, skip) {
			continue
		}
		to := filepath.Join(dst, filepath.FromSlash(e.Rel))
		from := filepath.Join(upper, filepath.FromSlash(e.Rel))
		switch e.What {
		case "removed":
			err = os.RemoveAll(to)
		case "replaced folder":
			if err = os.RemoveAll(to); err == nil {
				err = os.Mkdir(to, e.Mode.Perm()|0o700)
			}
		case "folder":
			if fi, lerr := os.Lstat(to); lerr == nil && !fi.IsDir() {
				os.Remove(to)
			}
			err = os.MkdirAll(to, e.Mode.Perm()|0o700)
		case "written":
			os.RemoveAll(to)
			err = sandbox.CopyFile(from, to, e.Mode.Perm())
		case "link":
			var target string
			if target, err = os.Readlink(from); err == nil {
				os.RemoveAll(to)
				err = os.Symlink(target, to)
			}
		default:
			err = errors.New(e.Rel + " is a " + e.What + ", which no check may see")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func skipped(rel string, skip map[string]bool) bool {
	for p := rel; ; {
		if skip[p] {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}
