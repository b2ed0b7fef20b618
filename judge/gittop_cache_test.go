package judge

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The kept answer follows the .git entries on the way up: a repository
// made above the loop folder, or in it, or removed, is seen at the next
// ask, as git itself would see it.
func TestCachedGitTopFollowsGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := canonicalOr(t.TempDir())
	dir := filepath.Join(base, "a", "loop")
	os.MkdirAll(dir, 0o755)
	top := gitTop(dir) // what git says of the temporary folder's own way up
	for i, step := range []struct {
		do   func()
		want string
	}{
		{func() {}, top},
		{func() {}, top},
		{func() { exec.Command("git", "init", "-q", filepath.Join(base, "a")).Run() }, filepath.Join(base, "a")},
		{func() {}, filepath.Join(base, "a")},
		{func() { exec.Command("git", "init", "-q", dir).Run() }, dir},
		{func() { os.RemoveAll(filepath.Join(dir, ".git")) }, filepath.Join(base, "a")},
		{func() { os.RemoveAll(filepath.Join(base, "a", ".git")) }, top},
	} {
		step.do()
		if got := cachedGitTop(dir); got != step.want {
			t.Fatalf("step %d: cachedGitTop = %q, want %q", i, got, step.want)
		}
		if got := gitTop(dir); got != step.want {
			t.Fatalf("step %d: git says %q, the test wants %q", i, got, step.want)
		}
	}
}
