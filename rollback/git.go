package rollback

import (
	"context"
	"os"
	"strings"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/safegit"
)

// WorkTreeOf is the tree of commit as snapshotTree sees a work tree: without
// the loop's records and the files in except (State.Outside). Records are committed where the branch carries them (a
// fleet loop's, or a user's by mistake); the engine's own commits keep
// them as they were at HEAD.
func WorkTreeOf(ctx context.Context, dir, commit string, except []string) (string, error) {
	tree, err := safegit.Line(ctx, dir, "rev-parse", "--verify", "-q", commit+"^{tree}")
	if err != nil {
		return "", err
	}
	names := append([]string{"--literal-pathspecs", "ls-tree", "-r", "--name-only", commit, "--", loopdir.RecordsDir}, except...)
	if out, _ := safegit.Line(ctx, dir, names...); out == "" {
		return tree, nil
	}
	idx, err := os.CreateTemp(string(loopdir.PrivateOf(dir)), ".tree-index-*")
	if err != nil {
		return "", err
	}
	idx.Close()
	defer os.Remove(idx.Name())
	env := []string{"GIT_INDEX_FILE=" + idx.Name()}
	if _, err := safegit.Run(ctx, dir, env, "read-tree", commit); err != nil {
		return "", err
	}
	// -f: the index is this function's own, read from commit. Without it
	// git refuses an entry that differs from both HEAD and the file, which
	// is every record of a commit older than HEAD where the branch carries
	// the records (a fleet's task commit under the steps' commits): no
	// checkpoint would ever be taken there.
	if _, err := safegit.Run(ctx, dir, env, append([]string{"--literal-pathspecs", "rm", "-r", "-q", "--cached", "-f", "--ignore-unmatch", "--", loopdir.RecordsDir}, except...)...); err != nil {
		return "", err
	}
	out, err := safegit.Run(ctx, dir, env, "write-tree")
	return strings.TrimSpace(out), err
}

// ResetKeepRecords moves the branch to commit as `git reset --keep` does
// (changes outside the loop folder are kept), and leaves the loop's records
// as they are even where git tracks them: they are moved aside, their
// tracked files restored for the reset, and moved back. The record file
// being written stays open through the moves.
func ResetKeepRecords(ctx context.Context, dir, commit string) error {
	if out, _ := safegit.Line(ctx, dir, "ls-files", "--", loopdir.RecordsDir); out == "" {
		_, err := safegit.Line(ctx, dir, "reset", "-q", "--keep", commit)
		return err
	}
	recs := loopdir.Dir(dir).Records()
	aside := loopdir.Dir(dir).RecordsAside()
	os.RemoveAll(aside)
	if err := os.Rename(recs, aside); err != nil {
		return err
	}
	back := func() error {
		if err := os.RemoveAll(recs); err != nil {
			return err
		}
		return os.Rename(aside, recs)
	}
	if _, err := safegit.Line(ctx, dir, "checkout", "-q", "HEAD", "--", loopdir.RecordsDir); err != nil {
		back()
		return err
	}
	if _, err := safegit.Line(ctx, dir, "reset", "-q", "--keep", commit); err != nil {
		back()
		return err
	}
	return back()
}

// gitignoreEscape quotes a path for a gitignore pattern (git clean -e).
func gitignoreEscape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`\*?[]!# `, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
