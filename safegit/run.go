package safegit

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
)

// ExcludeRecords keeps the engine's own files (transcripts, state, records)
// out of every diff and snapshot: the reviewer never sees them.
const ExcludeRecords = ":(exclude)" + loopdir.RecordsDir

// Run runs git in dir and returns its standard output.
// A command refused because another git process holds the index
// (index.lock: an editor refreshing its status, the committer's update of
// the index after a commit) is run again for up to 10 seconds.
func Run(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		cmd := exec.CommandContext(ctx, "git", Args(args...)...)
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
		if IndexBusy(msg) && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
}

// Line runs git in dir and returns its output without the surrounding
// white space.
func Line(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := Run(ctx, dir, nil, args...)
	return strings.TrimSpace(out), err
}

// Head is the commit HEAD names, or "" in a repository without commits.
func Head(ctx context.Context, dir string) string {
	h, err := Line(ctx, dir, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return ""
	}
	return h
}

// SnapshotTree writes the working tree (tracked and untracked files, minus
// ignored ones and working-records/) as a tree object, through a private
// copy of the index: the user's index and files are not touched.
func SnapshotTree(ctx context.Context, dir string) (string, error) {
	return snapshot(ctx, dir, nil, nil)
}

// SnapshotTreeExcept is SnapshotTree without the paths in except (files
// relative to dir that changed outside the loop's work, left to the user):
// they are not in the tree, whatever git tracks. working-records/ is kept
// out by the engine itself, tracked or not, ignored or not.
func SnapshotTreeExcept(ctx context.Context, dir string, except []string) (string, error) {
	return snapshot(ctx, dir, nil, except)
}

// SnapshotPaths is SnapshotTree with only the given paths (relative to
// dir, literal) taken from the working tree; every other path is as the
// index has it. Its cost grows with the paths, not the tree: git stats only
// them; a path named is taken even when git ignores it. A path neither in
// the tree nor in the index is an error.
func SnapshotPaths(ctx context.Context, dir string, paths []string) (string, error) {
	if len(paths) == 0 {
		paths = []string{}
	}
	return snapshot(ctx, dir, paths, nil)
}

func snapshot(ctx context.Context, dir string, paths, except []string) (string, error) {
	idx, err := Line(ctx, dir, "rev-parse", "--git-path", "index")
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
	src, err := os.Open(idx)
	if err == nil {
		io.Copy(tmp, src)
		src.Close()
	}
	tmp.Close()
	if err != nil {
		// No index yet (a repository nothing was added to): git reads a
		// missing index as empty, an empty file as corrupt.
		os.Remove(tmp.Name())
	}
	env := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	args := []string{"add", "-A", "--", "."}
	switch {
	case paths != nil && len(paths) == 0:
		args = nil
	case paths != nil:
		// -f: a path named is taken even when ignored (a .gitignore
		// written since cannot hide a changed file).
		args = append([]string{"add", "-A", "-f", "--"}, literal(paths)...)
	}
	// Whether .gitignore's rules name the records, whatever git tracks
	// (--no-index): where they do, git add takes no new file in them, and
	// naming them, even to exclude them, is an error to git add once a
	// records file is tracked. Where they do not, they are excluded by name.
	if _, err := Run(ctx, dir, nil, "check-ignore", "-q", "--no-index", loopdir.RecordsDir); err != nil && args != nil {
		args = append(args, ExcludeRecords)
	}
	if args != nil {
		if _, err := Run(ctx, dir, env, args...); err != nil {
			if paths != nil {
				return "", err
			}
			// The rules changed between the two commands, or git reads
			// them otherwise: the whole folder, the records taken out below.
			if _, err2 := Run(ctx, dir, env, "add", "-A", "--", "."); err2 != nil {
				return "", err
			}
		}
	}
	// Records a user committed by mistake stay out of the snapshot too.
	// -f: the index is a private copy; git's check that an entry matches
	// HEAD or the file (a records file or a user's file staged, then
	// written again) guards nothing here and would fail every snapshot.
	if _, err := Run(ctx, dir, env, "rm", "-r", "-q", "--cached", "-f", "--ignore-unmatch", "--", loopdir.RecordsDir); err != nil {
		return "", err
	}
	if len(except) > 0 {
		rm := append([]string{"--literal-pathspecs", "rm", "-r", "-q", "--cached", "-f", "--ignore-unmatch", "--"}, except...)
		if _, err := Run(ctx, dir, env, rm...); err != nil {
			return "", err
		}
	}
	out, err := Run(ctx, dir, env, "write-tree")
	return strings.TrimSpace(out), err
}

// literal marks paths as literal pathspecs (no glob, no magic).
func literal(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = ":(literal)" + p
	}
	return out
}
