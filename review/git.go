package review

import (
	"context"
	"fmt"
	"strings"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/safegit"
)

// MaxDiffBytes caps the diff a reviewer prompt carries.
const MaxDiffBytes = 400 << 10

// excludeReviewFiles keeps the review's own files (each round's findings,
// as the agents wrote them in output/review/) out of every diff an agent is
// shown: the reviewer of round N never reads round N-1's findings.
const excludeReviewFiles = ":(exclude)" + loopdir.OutputDir + "/review"

// emptyTree is the object name of the empty tree in this repository.
func emptyTree(ctx context.Context, dir string) (string, error) {
	return safegit.Line(ctx, dir, "hash-object", "-t", "tree", "/dev/null")
}

// resolveBase turns the review's base into an object to diff from. With no
// base: HEAD when the working tree has changes (or a writer will make
// them), else HEAD~1 (the last commit is the change), else the empty tree.
func resolveBase(ctx context.Context, dir, base string, writer bool) (name, sha string, err error) {
	if _, err := safegit.Line(ctx, dir, "rev-parse", "--is-inside-work-tree"); err != nil {
		return "", "", fmt.Errorf("the review shape needs a git repository (the reviewer reads the diff): %s is not inside one; run `git init` and commit the starting point", dir)
	}
	if base != "" {
		sha, err := safegit.Line(ctx, dir, "rev-parse", "--verify", "-q", base+"^{commit}")
		if err != nil || sha == "" {
			return "", "", fmt.Errorf("review base %q is not a commit in this repository", base)
		}
		return base, sha, nil
	}
	head := safegit.Head(ctx, dir)
	if head == "" {
		t, err := emptyTree(ctx, dir)
		return "(empty tree: no commit yet)", t, err
	}
	status, _ := safegit.Run(ctx, dir, nil, "status", "--porcelain", "--", ".", safegit.ExcludeRecords)
	if writer || strings.TrimSpace(status) != "" {
		return "HEAD", head, nil
	}
	if p, err := safegit.Line(ctx, dir, "rev-parse", "--verify", "-q", "HEAD~1^{commit}"); err == nil && p != "" {
		return "HEAD~1", p, nil
	}
	t, err := emptyTree(ctx, dir)
	return "(empty tree: the first commit is the change)", t, err
}

// gitDiff is the diff from one object to another, limited to paths (all of
// the loop's directory when none), relative to the loop's directory.
func gitDiff(ctx context.Context, dir, from, to string, paths []string) (string, error) {
	args := []string{"diff", "--relative", "--no-color", "--no-ext-diff", "--find-renames", from, to, "--"}
	if len(paths) == 0 {
		args = append(args, ".")
	} else {
		args = append(args, paths...)
	}
	args = append(args, safegit.ExcludeRecords, excludeReviewFiles)
	out, err := safegit.Run(ctx, dir, nil, args...)
	if err != nil {
		return "", err
	}
	if len(out) > MaxDiffBytes {
		cut := strings.LastIndex(out[:MaxDiffBytes], "\n")
		if cut < 0 {
			cut = MaxDiffBytes
		}
		out = out[:cut] + fmt.Sprintf("\n[diff cut at %d KiB of %d KiB: read the remaining files yourself]\n", MaxDiffBytes>>10, len(out)>>10)
	}
	return out, nil
}

// ChangedPaths lists the files that differ from one object to another
// (both sides of a rename), relative to the loop's directory.
func ChangedPaths(ctx context.Context, dir, from, to string) ([]string, error) {
	out, err := safegit.Run(ctx, dir, nil, "diff", "--relative", "--name-only", "--no-renames", "-z", from, to, "--", ".", safegit.ExcludeRecords, excludeReviewFiles)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// commitSubjects lists the subjects of the commits from..to (oldest first).
func commitSubjects(ctx context.Context, dir, from, to string) []string {
	if to == "" || from == to {
		return nil
	}
	rng := to
	if from != "" {
		rng = from + ".." + to
	}
	out, err := safegit.Run(ctx, dir, nil, "log", "--reverse", "--format=%s", rng)
	if err != nil {
		return nil
	}
	var subs []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			subs = append(subs, l)
		}
	}
	return subs
}
