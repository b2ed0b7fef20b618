package confine

import (
	"path/filepath"
	"reflect"
	"testing"
)

// The writable trees outside the loop folder get one layer each (a tree
// named twice, once), except a tree inside another (the outer layer covers it) and a tree inside the
// loop folder (the loop folder's own layer does); a layer is named by its
// tree, so HOME keeps its layer from run to run.
func TestTreeLayers(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := "/home/u/proj"
	trees := []string{"/home/u", "/home/u/.cache", "/opt/cli", "/home/u/proj/.gopath", "/opt/cli/"}
	var got []string
	for _, l := range TreeLayers(dir, trees, "tree-") {
		got = append(got, l.Target)
		if filepath.Dir(l.Upper) != filepath.Dir(l.Work) || filepath.Base(l.Upper) != "upper" {
			t.Errorf("layer of %s: upper %s, work %s", l.Target, l.Upper, l.Work)
		}
	}
	if want := []string{"/home/u", "/opt/cli"}; !reflect.DeepEqual(got, want) {
		t.Errorf("layered trees %v, want %v", got, want)
	}
	a, b := TreeLayers(dir, []string{"/home/u"}, "tree-"), TreeLayers("/other", []string{"/home/u"}, "tree-")
	if a[0].Upper != TreeLayers(dir, []string{"/home/u/"}, "tree-")[0].Upper {
		t.Error("one tree, two layers")
	}
	if a[0].Upper == b[0].Upper {
		t.Error("two loops share a HOME layer")
	}
}
