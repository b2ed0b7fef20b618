package review

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/safegit"
)

// MaxDiffBytes caps the diff a reviewer prompt carries.
const MaxDiffBytes = 400 << 10

// ExcludeRecords keeps the engine's own files (transcripts, state, records)
// out of every diff and snapshot: the reviewer never sees them.
const ExcludeRecords = ":(exclude)" + loopdir.RecordsDir

// excludeReviewFiles keeps the review's own files (each round's findings,
// as the agents wrote them in output/review/) out of every diff an agent is
// shown: the reviewer of round N never reads round N-1's findings.
const excludeReviewFiles = ":(exclude)" + loopdir.OutputDir + "/review"

// GitRun runs git in dir and returns its standard output.
// A command refused because another git process holds the index
// (index.lock: an editor refreshing its status, the committer's update of
// the index after a commit) is run again for up to 10 seconds.
func GitRun(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		cmd := exec.CommandContext(ctx, "git", safegit.Args(args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
		cmd.Env = append(cmd.Env, env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err == nil {
			return out.String(), nil
		}
		msg := strings.TrimSpace(errb.String())
		if safegit.IndexBusy(msg) && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
}

// GitLine runs git in dir and returns its output without the surrounding
// white space.
func GitLine(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := GitRun(ctx, dir, nil, args...)
	return strings.TrimSpace(out), err
}

// GitHead is the commit HEAD names, or "" in a repository without commits.
func GitHead(ctx context.Context, dir string) string {
	h, err := GitLine(ctx, dir, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return ""
	}
	return h
}

// emptyTree is the object name of the empty tree in this repository.
func emptyTree(ctx context.Context, dir string) (string, error) {
	return GitLine(ctx, dir, "hash-object", "-t", "tree", "/dev/null")
}

// resolveBase turns the review's base into an object to diff from. With no
// base: HEAD when the working tree has changes (or a writer will make
// them), else HEAD~1 (the last commit is the change), else the empty tree.
func resolveBase(ctx context.Context, dir, base string, writer bool) (name, sha string, err error) {
	if _, err := GitLine(ctx, dir, "rev-parse", "--is-inside-work-tree"); err != nil {
		return "", "", fmt.Errorf("the review shape needs a git repository (the reviewer reads the diff): %s is not inside one; run `git init` and commit the starting point", dir)
	}
	if base != "" {
		sha, err := GitLine(ctx, dir, "rev-parse", "--verify", "-q", base+"^{commit}")
		if err != nil || sha == "" {
			return "", "", fmt.Errorf("review base %q is not a commit in this repository", base)
		}
		return base, sha, nil
	}
	head := GitHead(ctx, dir)
	if head == "" {
		t, err := emptyTree(ctx, dir)
		return "(empty tree: no commit yet)", t, err
	}
	status, _ := GitRun(ctx, dir, nil, "status", "--porcelain", "--", ".", ExcludeRecords)
	if writer || strings.TrimSpace(status) != "" {
		return "HEAD", head, nil
	}
	if p, err := GitLine(ctx, dir, "rev-parse", "--verify", "-q", "HEAD~1^{commit}"); err == nil && p != "" {
		return "HEAD~1", p, nil
	}
	t, err := emptyTree(ctx, dir)
	return "(empty tree: the first commit is the change)", t, err
}

// SnapshotTree writes the working tree (tracked and untracked files, minus
// ignored ones and working-records/) as a tree object, through a private
// copy of the index: the user's index and files are not touched.
func SnapshotTree(ctx context.Context, dir string) (string, error) {
	idx, err := GitLine(ctx, dir, "rev-parse", "--git-path", "index")
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(idx) {
		idx = filepath.Join(dir, idx)
	}
	// Beside the index, never in the temp folder: that may be inside the
	// work tree ($TMPDIR under it), and the snapshot would take it in.
	tmp, err := os.CreateTemp(filepath.Dir(idx), "looprinter-index-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if src, err := os.Open(idx); err == nil {
		io.Copy(tmp, src)
		src.Close()
	}
	tmp.Close()
	env := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	args := []string{"add", "-A", "--", "."}
	if _, err := GitRun(ctx, dir, nil, "check-ignore", "-q", loopdir.RecordsDir); err != nil {
		args = append(args, ExcludeRecords) // not ignored: keep it out (naming an ignored path is an error)
	}
	if _, err := GitRun(ctx, dir, env, args...); err != nil {
		return "", err
	}
	// Records a user committed by mistake stay out of the snapshot too.
	GitRun(ctx, dir, env, "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", loopdir.RecordsDir)
	return func() (string, error) {
		out, err := GitRun(ctx, dir, env, "write-tree")
		return strings.TrimSpace(out), err
	}()
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
	args = append(args, ExcludeRecords, excludeReviewFiles)
	out, err := GitRun(ctx, dir, nil, args...)
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
	out, err := GitRun(ctx, dir, nil, "diff", "--relative", "--name-only", "--no-renames", "-z", from, to, "--", ".", ExcludeRecords, excludeReviewFiles)
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
	out, err := GitRun(ctx, dir, nil, "log", "--reverse", "--format=%s", rng)
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
