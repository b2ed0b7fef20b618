package wave

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/looprinter/looprinter/safegit"
)

// When several build runs work at once, each
// on its own layer over the tree as it was when it started, the engine
// applies a run's layer whole when none of its paths were changed by a run
// applied since it started (ApplyLog.TouchedSince); a path both changed is
// merged three-way (MergeText), and a conflict makes the task run again on
// the new tree (a task_conflict record).

// MaxMergeBytes bounds each side of a three-way merge; a larger file is a
// conflict, never read whole.
const MaxMergeBytes = 4 << 20

// MergeText merges two changes of one file made from the same base, with
// `git merge-file` semantics: ours is what the folder holds now (the runs
// applied since this one started), theirs what this run wrote. conflict is
// true where both changed the same lines, where a side is not text (a NUL
// byte in its first 8000 bytes, as git decides) or is larger than
// MaxMergeBytes; merged is then nil. A side that did not change takes the
// other side whole, text or not. tmp is a folder of the engine's own where
// the three versions are written for git.
func MergeText(ctx context.Context, tmp string, base, ours, theirs []byte) (merged []byte, conflict bool, err error) {
	switch {
	case bytes.Equal(ours, theirs), bytes.Equal(theirs, base):
		return ours, false, nil
	case bytes.Equal(ours, base):
		return theirs, false, nil
	}
	for _, side := range [][]byte{base, ours, theirs} {
		if len(side) > MaxMergeBytes || binaryText(side) {
			return nil, true, nil
		}
	}
	if len(base) > 0 && bytes.HasPrefix(ours, base) && bytes.HasPrefix(theirs, base) {
		// Both only appended to a file that was there (each run's
		// findings at the end of progress.txt): ours, then what this run
		// added. git would call the two tails a conflict. Two new files
		// of different text still conflict.
		return append(append([]byte(nil), ours...), theirs[len(base):]...), false, nil
	}
	dir, err := os.MkdirTemp(tmp, "merge-")
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(dir)
	names := []string{"ours", "base", "theirs"}
	for i, data := range [][]byte{ours, base, theirs} {
		if err := os.WriteFile(filepath.Join(dir, names[i]), data, 0o600); err != nil {
			return nil, false, err
		}
	}
	// -p: the result on stdout; the exit status is the number of
	// conflicts (at most 127), negative (255 and up) on an error. The
	// user's and the system's git configuration are not read: the result
	// depends on the three versions alone.
	cmd := exec.CommandContext(ctx, "git", safegit.Args("merge-file", "-p", "--", "ours", "base", "theirs")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	rerr := cmd.Run()
	var exit *exec.ExitError
	switch {
	case rerr == nil:
		return out.Bytes(), false, nil
	case errors.As(rerr, &exit) && exit.ExitCode() > 0 && exit.ExitCode() < 128:
		return nil, true, nil
	default:
		return nil, false, fmt.Errorf("git merge-file: %v: %s", rerr, bytes.TrimSpace(errb.Bytes()))
	}
}

// binaryText is git's test for a file it will not merge as text.
func binaryText(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// ApplyLog is what each applied run changed in the loop folder, in the
// order they were applied, for the runs still in flight to be judged
// against: a run started when the log held n entries sees the folder as
// those n runs left it.
type ApplyLog struct {
	applied []appliedRun // in apply order
}

// appliedRun is what one applied run changed: paths written, created or
// removed, and folders it replaced whole (an opaque folder in its layer:
// removed and made again), which change every path under them.
type appliedRun struct {
	paths    []string
	replaced []string
}

// Mark is where a run that starts now begins: its position in the log.
func (l *ApplyLog) Mark() int { return len(l.applied) }

// Add notes the paths of a run just applied, and the folders it replaced
// whole.
func (l *ApplyLog) Add(paths []string, replaced ...string) {
	l.applied = append(l.applied, appliedRun{append([]string(nil), paths...), append([]string(nil), replaced...)})
}

// TouchedSince lists, sorted, the paths of mine that a run applied after
// mark changed too: those are merged; the rest of mine are applied as the
// run wrote them.
func (l *ApplyLog) TouchedSince(mark int, mine []string) []string {
	if mark < 0 || mark > len(l.applied) {
		mark = 0 // an unknown start: judged against every applied run
	}
	want := map[string]bool{}
	for _, p := range mine {
		want[p] = true
	}
	hit := map[string]bool{}
	for _, run := range l.applied[mark:] {
		for _, p := range run.paths {
			if want[p] {
				hit[p] = true
			}
		}
		for _, d := range run.replaced {
			for p := range want {
				if p == d || strings.HasPrefix(p, d+"/") {
					hit[p] = true
				}
			}
		}
	}
	out := make([]string, 0, len(hit))
	for p := range hit {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
