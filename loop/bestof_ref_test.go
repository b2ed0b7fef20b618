//go:build unix

package loop

import (
	"bytes"
	"context"
	"github.com/looprinter/looprinter/wave"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// An attempt's layer is committed on top of HEAD on its own ref: the ref's
// tree holds the layer's files, lacks what it removed (a whiteout, a
// removed folder), keeps out ignored files and the records; HEAD, the
// index and the work tree are as they were. In a loop folder below the top
// of the repository the paths land under it.
func TestCommitLayerRef(t *testing.T) {
	needGit(t)
	for _, sub := range []string{"", "app"} {
		t.Run("sub="+sub, func(t *testing.T) {
			top := t.TempDir()
			dir := filepath.Join(top, sub)
			files := map[string]string{".gitignore": "*.log\nworking-records/\n", "a.txt": "one\n", "gone.txt": "x\n", "lib/x.txt": "x\n", "lib/y.txt": "y\n", "keep/k.txt": "k\n"}
			for n, b := range files {
				p := filepath.Join(dir, n)
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(b), 0o644)
			}
			gitInit(t, top)
			// The user's own state: a staged change and an untracked file.
			os.WriteFile(filepath.Join(dir, "a.txt"), []byte("user's edit\n"), 0o644)
			gitIn(t, dir, "add", "a.txt")
			os.WriteFile(filepath.Join(dir, "untracked.txt"), []byte("mine\n"), 0o644)
			head := gitOut(t, top, "rev-parse", "HEAD")
			index, _ := os.ReadFile(filepath.Join(top, ".git", "index"))
			status := gitOut(t, top, "status", "--porcelain")

			upper := t.TempDir()
			put := func(rel, s string, mode os.FileMode) {
				p := filepath.Join(upper, rel)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(s), mode); err != nil {
					t.Fatal(err)
				}
			}
			put("a.txt", "attempt's one\n", 0o644)
			put("new/n.sh", "#!/bin/sh\n", 0o755)
			put("build.log", "ignored\n", 0o644)
			put("working-records/r.jsonl", "{}\n", 0o644)
			os.Symlink("a.txt", filepath.Join(upper, "link"))
			for _, w := range []string{"gone.txt", "lib"} {
				if err := unix.Mknod(filepath.Join(upper, w), unix.S_IFCHR, 0); err != nil {
					t.Skipf("no whiteout can be made here: %v", err)
				}
			}
			ref := bestOfRef("demo", "T-002", 7, 1)
			if ref != "refs/looprinter/demo/best-of/T-002/7-2" {
				t.Fatalf("ref %s", ref)
			}
			commit, err := wave.CommitRef(context.Background(), dir, upper, ref, "looprinter demo: T-002 attempt 2 of 3\n\nfailed")
			if err != nil {
				t.Fatal(err)
			}
			if got := gitOut(t, top, "rev-parse", ref); got != commit {
				t.Fatalf("%s is %s, want %s", ref, got, commit)
			}
			if got := gitOut(t, top, "rev-parse", ref+"^"); got != head {
				t.Errorf("the attempt's parent is %s, want HEAD %s", got, head)
			}
			at := func(p string) string {
				if sub != "" {
					return sub + "/" + p
				}
				return p
			}
			names := strings.Split(gitOut(t, top, "ls-tree", "-r", "--name-only", ref), "\n")
			sort.Strings(names)
			var want []string
			for _, p := range []string{".gitignore", "a.txt", "keep/k.txt", "link", "new/n.sh"} {
				want = append(want, at(p))
			}
			sort.Strings(want)
			if strings.Join(names, " ") != strings.Join(want, " ") {
				t.Errorf("the ref's tree holds %v, want %v", names, want)
			}
			if got := gitOut(t, top, "show", ref+":"+at("a.txt")); got != "attempt's one" {
				t.Errorf("a.txt on the ref: %q", got)
			}
			if got := gitOut(t, top, "ls-tree", ref, at("new/n.sh")); !strings.HasPrefix(got, "100755 ") {
				t.Errorf("the executable file: %q", got)
			}
			if got := gitOut(t, top, "ls-tree", ref, at("link")); !strings.HasPrefix(got, "120000 ") {
				t.Errorf("the link: %q", got)
			}
			if got := gitOut(t, top, "rev-parse", "HEAD"); got != head {
				t.Errorf("HEAD moved to %s", got)
			}
			if now, _ := os.ReadFile(filepath.Join(top, ".git", "index")); !bytes.Equal(now, index) {
				t.Error("the index changed")
			}
			if got := gitOut(t, top, "status", "--porcelain"); got != status {
				t.Errorf("the work tree's status changed:\n%s\nwas:\n%s", got, status)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "user's edit\n" {
				t.Errorf("a.txt in the work tree: %q", b)
			}
			if _, err := os.Stat(filepath.Join(dir, "gone.txt")); err != nil {
				t.Error("gone.txt left the work tree")
			}
			// A replaced (opaque) folder: nothing of HEAD's folder below it.
			up2 := t.TempDir()
			os.Mkdir(filepath.Join(up2, "keep"), 0o755)
			os.WriteFile(filepath.Join(up2, "keep", "new.txt"), []byte("n\n"), 0o644)
			if unix.Setxattr(filepath.Join(up2, "keep"), "trusted.overlay.opaque", []byte("y"), 0) != nil &&
				unix.Setxattr(filepath.Join(up2, "keep"), "user.overlay.opaque", []byte("y"), 0) != nil {
				t.Skip("no opaque folder can be marked here")
			}
			ref2 := bestOfRef("demo", "T-002", 7, 2)
			if _, err := wave.CommitRef(context.Background(), dir, up2, ref2, "attempt 3"); err != nil {
				t.Fatal(err)
			}
			if got := gitOut(t, top, "ls-tree", "-r", "--name-only", ref2, at("keep")); got != at("keep/new.txt") {
				t.Errorf("the replaced folder on the ref holds %q", got)
			}
		})
	}
}
