//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// HOME's layer hides what the view does not keep: a whiteout for each other
// entry, the folders on the way to a kept one merged, the layer's own
// files left as they are.
func TestWhiteoutAround(t *testing.T) {
	root := t.TempDir()
	l := Layer{Target: filepath.Join(root, "home"), Upper: filepath.Join(root, "u"), Work: filepath.Join(root, "w")}
	for _, d := range []string{"home/.claude", "home/projects/loop", "home/projects/other", "home/.config/gh", "home/.config/git", "u/.config", "u/mine", "w"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	for _, f := range []string{"home/diary.txt", "home/.bashrc", "u/.bashrc", "u/.config/new.txt"} {
		os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644)
	}
	keep := []string{filepath.Join(l.Target, ".claude"), filepath.Join(l.Target, "projects/loop"), filepath.Join(l.Target, ".config/git")}
	if err := whiteoutAround(l, "", keep); err != nil {
		t.Fatal(err)
	}
	white := func(rel string) bool {
		fi, err := os.Lstat(filepath.Join(l.Upper, rel))
		return err == nil && kindOf(filepath.Join(l.Upper, rel), fi) == "removed"
	}
	for _, rel := range []string{"diary.txt", "projects/other", ".config/gh"} {
		if !white(rel) {
			t.Errorf("%s is not hidden", rel)
		}
	}
	for _, rel := range []string{".claude", "projects/loop", ".config/git", ".bashrc", ".config/new.txt", "mine", "projects", ".config"} {
		if white(rel) {
			t.Errorf("%s is hidden", rel)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(l.Upper, ".bashrc")); string(b) != "x" {
		t.Error("the layer's own file was touched")
	}
	// Laid again before the next run: nothing changes, nothing fails.
	if err := whiteoutAround(l, "", keep); err != nil {
		t.Fatal(err)
	}
}
