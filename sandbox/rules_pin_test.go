package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// grant: a writable tree without read-only paths inside is one grant; one
// holding some is granted entry by entry around them, through every level,
// links left out; a tree at or inside a read-only path, or missing, is not
// granted at all.
func TestPinRulesGrant(t *testing.T) {
	root := viewRoot(t)
	for _, d := range []string{"w/a/ro", "w/a/b", "w/c", "elsewhere"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	for _, f := range []string{"w/f", "w/a/g", "w/a/ro/x", "single"} {
		os.WriteFile(filepath.Join(root, f), nil, 0o644)
	}
	os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, "w/link"))
	os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, "w/a/link"))
	rel := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			r, _ := filepath.Rel(root, p)
			out = append(out, r)
		}
		slices.Sort(out)
		return out
	}
	check := func(w string, ro []string, wantDirs, wantFiles []string) {
		t.Helper()
		var dirs, files []string
		var abs []string
		for _, r := range ro {
			abs = append(abs, filepath.Join(root, r))
		}
		grant(filepath.Join(root, w), abs, &dirs, &files)
		if got := rel(dirs); !slices.Equal(got, wantDirs) {
			t.Errorf("grant(%s, %v): dirs %q, want %q", w, ro, got, wantDirs)
		}
		if got := rel(files); !slices.Equal(got, wantFiles) {
			t.Errorf("grant(%s, %v): files %q, want %q", w, ro, got, wantFiles)
		}
	}
	check("w", nil, []string{"w"}, nil)
	check("w", []string{"elsewhere", "wx"}, []string{"w"}, nil)
	check("w", []string{"w/a/ro"}, []string{"w/a/b", "w/c"}, []string{"w/a/g", "w/f"})
	check("w", []string{"w/a/ro", "w/c"}, []string{"w/a/b"}, []string{"w/a/g", "w/f"})
	check("w", []string{"w"}, nil, nil)
	check("w/a", []string{"w"}, nil, nil)
	check("single", nil, nil, []string{"single"})
	check("single", []string{"single"}, nil, nil)
	check("missing", nil, nil, nil)
	check("w/link", nil, []string{"w/link"}, nil) // the tree itself may be a link: it is granted as named
}

// maskArgs: a folder masked by an empty tmpfs, anything else by /dev/null,
// by its real path, once; what does not exist is left out.
func TestPinRulesMaskArgs(t *testing.T) {
	root := viewRoot(t)
	os.MkdirAll(filepath.Join(root, "d"), 0o755)
	os.WriteFile(filepath.Join(root, "f"), nil, 0o600)
	os.Symlink(filepath.Join(root, "d"), filepath.Join(root, "ld"))
	got := strings.Join(maskArgs([]string{filepath.Join(root, "d"), filepath.Join(root, "f"), filepath.Join(root, "missing"), filepath.Join(root, "ld"), ""}), " ")
	want := "--tmpfs " + filepath.Join(root, "d") + " --ro-bind /dev/null " + filepath.Join(root, "f")
	if got != want {
		t.Errorf("maskArgs: %s\nwant %s", got, want)
	}
	if got := maskArgs(nil); got != nil {
		t.Errorf("maskArgs(nil) = %q", got)
	}
}
