package wave

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/sandbox"
)

// Ref is where attempt k (from 0) of a best-of of task, in the wave that
// started at build run iteration, is kept under the loop's refs (prefix,
// refs/looprinter/NAME/): PREFIX best-of/TASK/ITERATION-K (K from 1).
// Rollback's stops keep their work on PREFIX attempt-N, so best-of's refs
// live under best-of/; the iteration keeps a second best-of of the same
// task from overwriting the first's.
func Ref(prefix, task string, iteration, k int) string {
	return fmt.Sprintf("%sbest-of/%s/%d-%d", prefix, task, iteration, k+1)
}

// CommitRef commits what an attempt's layer (upper, over the loop
// folder dir) changes on top of HEAD and points ref at the commit. Neither
// the work tree nor the index is touched: the tree is made in a private
// copy of the index (HEAD's tree read into it, the layer's paths written
// or removed by name, its blobs hashed from the layer's files), and only
// ref moves. A whiteout removes its path (a folder with everything in it);
// a replaced folder drops what HEAD holds below it first. Files git
// ignores that HEAD does not track, the engine's records and any .git are
// left out, as from the engine's own commits. It returns the commit.
func CommitRef(ctx context.Context, dir, upper, ref, message string) (string, error) {
	head := safegit.Head(ctx, dir)
	if head == "" {
		return "", errors.New("the repository has no commit to put the attempt on")
	}
	entries, err := sandbox.LayerEntries(upper)
	if err != nil {
		return "", fmt.Errorf("the attempt's layer cannot be read: %w", err)
	}
	prefix, err := safegit.Line(ctx, dir, "rev-parse", "--show-prefix")
	if err != nil {
		return "", err
	}
	idx, err := safegit.Line(ctx, dir, "rev-parse", "--git-path", "index")
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(idx) {
		idx = filepath.Join(dir, idx)
	}
	// Beside the index, never in the temporary folder (it may lie inside
	// the work tree).
	tmp, err := os.CreateTemp(filepath.Dir(idx), "looprinter-attempt-index-*")
	if err != nil {
		return "", err
	}
	tmp.Close()
	os.Remove(tmp.Name()) // git reads a missing index as empty, an empty file as corrupt
	defer os.Remove(tmp.Name())
	env := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	if _, err := safegit.Run(ctx, dir, env, "read-tree", head); err != nil {
		return "", err
	}
	skip := func(rel string) bool {
		first, _, _ := strings.Cut(rel, "/")
		return first == loopdir.RecordsDir || first == ".git" || path.Base(rel) == ".git" || strings.ContainsAny(rel, "\n\t")
	}
	var gone, files, links []string
	for _, e := range entries {
		if skip(e.Rel) {
			continue
		}
		switch e.What {
		case "removed", "replaced folder":
			gone = append(gone, e.Rel)
		case "written":
			files = append(files, e.Rel)
		case "link":
			links = append(links, e.Rel)
		}
	}
	if len(gone) > 0 {
		rm := append([]string{"rm", "-r", "-q", "--cached", "-f", "--ignore-unmatch", "--"}, literalSpecs(gone)...)
		if _, err := safegit.Run(ctx, dir, env, rm...); err != nil {
			return "", err
		}
	}
	// Ignored paths HEAD does not track stay out, as from the engine's
	// commits (a build's output, a dependency folder).
	present := append(append([]string{}, files...), links...)
	if len(present) > 0 {
		out, _ := safegit.Run(ctx, dir, env, append([]string{"ls-files", "-z", "--"}, literalSpecs(present)...)...)
		tracked := map[string]bool{}
		for _, p := range strings.Split(out, "\x00") {
			if p != "" {
				tracked[p] = true
			}
		}
		ignored := map[string]bool{}
		// check-ignore exits 1 when it matches nothing.
		out, _ = safegit.RunInput(ctx, dir, nil, strings.Join(present, "\x00")+"\x00", "check-ignore", "--no-index", "-z", "--stdin")
		for _, p := range strings.Split(out, "\x00") {
			if p != "" && !tracked[p] {
				ignored[p] = true
			}
		}
		keep := func(list []string) []string {
			var out []string
			for _, p := range list {
				if !ignored[p] {
					out = append(out, p)
				}
			}
			return out
		}
		files, links = keep(files), keep(links)
	}
	var info strings.Builder
	if len(files) > 0 {
		var in strings.Builder
		for _, f := range files {
			in.WriteString(filepath.Join(upper, filepath.FromSlash(f)) + "\n")
		}
		out, err := safegit.RunInput(ctx, dir, nil, in.String(), "hash-object", "-w", "--no-filters", "--stdin-paths")
		if err != nil {
			return "", err
		}
		shas := strings.Fields(out)
		if len(shas) != len(files) {
			return "", fmt.Errorf("git hash-object: %d names for %d files", len(shas), len(files))
		}
		for i, f := range files {
			mode := "100644"
			if fi, err := os.Lstat(filepath.Join(upper, filepath.FromSlash(f))); err == nil && fi.Mode().Perm()&0o111 != 0 {
				mode = "100755"
			}
			fmt.Fprintf(&info, "%s %s\t%s\n", mode, shas[i], path.Join(prefix, f))
		}
	}
	for _, l := range links {
		to, err := os.Readlink(filepath.Join(upper, filepath.FromSlash(l)))
		if err != nil {
			return "", err
		}
		sha, err := safegit.RunInput(ctx, dir, nil, to, "hash-object", "-w", "--stdin")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&info, "120000 %s\t%s\n", strings.TrimSpace(sha), path.Join(prefix, l))
	}
	if info.Len() > 0 {
		// --index-info names paths from the top of the repository. A file
		// where HEAD has a folder (or the other way round) replaces it.
		if _, err := safegit.RunInput(ctx, dir, env, info.String(), "update-index", "--add", "--replace", "--index-info"); err != nil {
			return "", err
		}
	}
	tree, err := safegit.Run(ctx, dir, env, "write-tree")
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", strings.TrimSpace(tree), "-p", head, "-m", message}
	if email, _ := safegit.Line(ctx, dir, "config", "user.email"); email == "" {
		// No identity: git would refuse; the commit is looprinter's.
		args = append([]string{"-c", "user.name=looprinter", "-c", "user.email=looprinter@localhost"}, args...)
	}
	commit, err := safegit.Line(ctx, dir, args...)
	if err != nil {
		return "", err
	}
	if _, err := safegit.Line(ctx, dir, "update-ref", "-m", "looprinter: "+strings.SplitN(message, "\n", 2)[0], ref, commit); err != nil {
		return "", err
	}
	return commit, nil
}

// literalSpecs marks paths as literal pathspecs (no glob, no magic).
func literalSpecs(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = ":(literal)" + p
	}
	return out
}
