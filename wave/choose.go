package wave

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/sandbox"
)

// retry.choose: review. Once a best-of's attempts are judged, a reviewer
// agent may pick the kept one among those that passed; the engine tries
// its pick first and then the rule's order (Order), so a pick that fails
// on the applied tree, or names an attempt that did not pass, keeps what
// the rule would.

// Order is the order in which the passing attempts are tried: Ranked,
// with the attempt at position chosen-1 moved first when it passed
// (chosen 0, out of range, or a failing attempt: Ranked as it is).
func Order(attempts []Attempt, chosen int) []int {
	out := Ranked(attempts)
	if chosen < 1 || chosen > len(attempts) || !attempts[chosen-1].Pass {
		return out
	}
	i := slices.Index(out, chosen-1)
	return append([]int{chosen - 1}, slices.Delete(out, i, i+1)...)
}

// LayerDiff is an attempt's change as text for a reviewer: for each path
// its layer writes, a header line and the unified diff from the folder
// dir's version (git diff --no-index, its own header lines left out), a
// removed path or replaced folder on its header line alone; at most max
// bytes, the rest left out with a note. It reads the layer and dir only.
func LayerDiff(ctx context.Context, dir, upper string, max int) (string, error) {
	entries, err := sandbox.LayerEntries(upper)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range entries {
		below := filepath.Join(dir, filepath.FromSlash(e.Rel))
		switch e.What {
		case "folder":
			continue
		case "removed":
			fmt.Fprintf(&b, "=== %s: removed\n", e.Rel)
		case "replaced folder":
			fmt.Fprintf(&b, "=== %s/: the folder replaced (what it held removed)\n", e.Rel)
		case "written", "link":
			what := "changed"
			if _, err := os.Lstat(below); err != nil {
				what, below = "new", os.DevNull
			}
			fmt.Fprintf(&b, "=== %s: %s\n", e.Rel, what)
			d, err := fileDiff(ctx, below, filepath.Join(upper, filepath.FromSlash(e.Rel)))
			if err != nil {
				return "", err
			}
			b.WriteString(d)
		default:
			fmt.Fprintf(&b, "=== %s: a %s\n", e.Rel, e.What)
		}
		if b.Len() > max {
			break
		}
	}
	return cutText(strings.TrimRight(b.String(), "\n"), max), nil
}

// fileDiff is the unified diff from below to above without git's header
// lines (diff, index, ---, +++): its hunks, or git's "Binary files" line.
func fileDiff(ctx context.Context, below, above string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", safegit.Args("diff", "--no-index", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "-U3", "--", below, above)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return "", fmt.Errorf("git diff --no-index: %v: %s", err, strings.TrimSpace(errb.String()))
	}
	text := out.String()
	if i := strings.Index(text, "\n@@"); i >= 0 {
		return text[i+1:], nil
	}
	if i := strings.Index(text, "Binary files"); i >= 0 {
		return "(a binary file)\n", nil
	}
	return "", nil
}
