package confine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A run's tree is its layer's files over the loop folder's, in the folder
// listed and in each folder below it, from wherever the engine runs.
func TestTreeOfListsTheFolderAndTheLayer(t *testing.T) {
	folder, upper := t.TempDir(), t.TempDir()
	for p, body := range map[string]string{
		filepath.Join(folder, "calc.py"):          "old",
		filepath.Join(folder, "pkg", "util.py"):   "util",
		filepath.Join(upper, "calc.py"):           "new",
		filepath.Join(upper, "pkg", "extra.py"):   "extra",
		filepath.Join(folder, "pkg", "deep", "x"): "x",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(t.TempDir()) // no folder of the tree is read relative to here
	tree := TreeOf(folder, upper)
	if b, ok := tree.Read("calc.py"); !ok || string(b) != "new" {
		t.Errorf("calc.py reads %q, %v; want the layer's", b, ok)
	}
	if b, ok := tree.Read("pkg/util.py"); !ok || string(b) != "util" {
		t.Errorf("pkg/util.py reads %q, %v; want the folder's", b, ok)
	}
	files, dirs := tree.List("")
	if slices.Sort(files); !slices.Equal(files, []string{"calc.py"}) || !slices.Equal(dirs, []string{"pkg"}) {
		t.Errorf("the top lists %v and %v", files, dirs)
	}
	files, dirs = tree.List("pkg")
	if slices.Sort(files); !slices.Equal(files, []string{"extra.py", "util.py"}) || !slices.Equal(dirs, []string{"deep"}) {
		t.Errorf("pkg lists %v and %v", files, dirs)
	}
}
