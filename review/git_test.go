package review

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/internal/testkit"
	"github.com/looprinter/looprinter/safegit"
)

// The review's base: a named commit, else HEAD when the tree has changes
// (or a writer will make them), else the last commit's parent, else the
// empty tree; outside a repository, or with a base that is not a commit,
// an error that says so.
func TestResolveReviewBase(t *testing.T) {
	testkit.Need(t, "git")
	ctx := context.Background()
	dir := t.TempDir()
	if _, _, err := resolveBase(ctx, dir, "", false); err == nil || !strings.Contains(err.Error(), "needs a git repository") {
		t.Fatalf("outside a repository: %v", err)
	}
	testkit.Git(t, dir, "init", "-q")
	testkit.Git(t, dir, "config", "user.email", "t@example.com")
	testkit.Git(t, dir, "config", "user.name", "T")
	if name, sha, err := resolveBase(ctx, dir, "", false); err != nil || !strings.Contains(name, "no commit yet") || sha == "" {
		t.Errorf("no commit: %q %q %v, want the empty tree", name, sha, err)
	}
	os.WriteFile(filepath.Join(dir, "a"), []byte("1"), 0o644)
	testkit.Git(t, dir, "add", "a")
	testkit.Git(t, dir, "commit", "-qm", "one")
	empty, _ := emptyTree(ctx, dir)
	if name, sha, err := resolveBase(ctx, dir, "", false); err != nil || !strings.Contains(name, "the first commit is the change") || sha != empty {
		t.Errorf("one clean commit: %q %q %v, want the empty tree", name, sha, err)
	}
	first := safegit.Head(ctx, dir)
	os.WriteFile(filepath.Join(dir, "a"), []byte("2"), 0o644)
	testkit.Git(t, dir, "commit", "-qam", "two")
	second := safegit.Head(ctx, dir)
	if name, sha, err := resolveBase(ctx, dir, "", false); err != nil || name != "HEAD~1" || sha != first {
		t.Errorf("two clean commits: %q %q %v, want HEAD~1 = %s", name, sha, err, first)
	}
	if name, sha, err := resolveBase(ctx, dir, "", true); err != nil || name != "HEAD" || sha != second {
		t.Errorf("clean tree with a writer: %q %q %v, want HEAD", name, sha, err)
	}
	os.WriteFile(filepath.Join(dir, "a"), []byte("3"), 0o644)
	if name, sha, err := resolveBase(ctx, dir, "", false); err != nil || name != "HEAD" || sha != second {
		t.Errorf("changed tree: %q %q %v, want HEAD = %s", name, sha, err, second)
	}
	if name, sha, err := resolveBase(ctx, dir, first, false); err != nil || name != first || sha != first {
		t.Errorf("named base: %q %q %v", name, sha, err)
	}
	if _, _, err := resolveBase(ctx, dir, "no-such-branch", false); err == nil || !strings.Contains(err.Error(), `"no-such-branch" is not a commit`) {
		t.Errorf("a base that is no commit: %v", err)
	}
}
