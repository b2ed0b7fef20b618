package wave

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The reviewer's pick is tried first only when it passed; the rule's
// order follows, so a pick that fails on the applied tree keeps the
// rule's next.
func TestOrderChosenFirst(t *testing.T) {
	as := []Attempt{
		{Index: 0, Pass: true, Change: Change{Lines: 2}},
		{Index: 1, Pass: false, Change: Change{Lines: 1}},
		{Index: 2, Pass: true, Change: Change{Lines: 9}},
		{Index: 3, Pass: true, Change: Change{Lines: 5}},
	}
	for chosen, want := range map[int][]int{0: {0, 3, 2}, 3: {2, 0, 3}, 4: {3, 0, 2}, 1: {0, 3, 2}, 2: {0, 3, 2}, 5: {0, 3, 2}, -1: {0, 3, 2}} {
		if got := Order(as, chosen); !slices.Equal(got, want) {
			t.Errorf("chosen %d: %v, want %v", chosen, got, want)
		}
	}
	var tried []int
	best, ok, err := Keeper{
		Apply:  func(i int) (bool, error) { tried = append(tried, i); return i != 2, nil },
		Drop:   func(int) {},
		Chosen: 3,
	}.Keep(as)
	if best != 0 || !ok || err != nil || !slices.Equal(tried, []int{2, 0}) {
		t.Errorf("kept %d %v %v after trying %v; want 0 after [2 0]", best, ok, err, tried)
	}
}

// LayerDiff shows each path a layer changes, with its hunks, never the
// absolute paths of the folder or the layer.
func TestLayerDiff(t *testing.T) {
	dir, upper := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc A() int { return 0 }\n"), 0o644)
	os.WriteFile(filepath.Join(upper, "a.go"), []byte("package a\n\nfunc A() int { return 1 }\n"), 0o644)
	os.WriteFile(filepath.Join(upper, "b.go"), []byte("package a\n"), 0o644)
	d, err := LayerDiff(context.Background(), dir, upper, 10000)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"=== a.go: changed\n@@", "-func A() int { return 0 }\n+func A() int { return 1 }", "=== b.go: new\n@@ -0,0 +1 @@\n+package a"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, dir) || strings.Contains(d, upper) {
		t.Errorf("diff shows a path:\n%s", d)
	}
	if d, _ := LayerDiff(context.Background(), dir, upper, 40); !strings.Contains(d, "more bytes of this attempt's output left out") {
		t.Errorf("not cut:\n%s", d)
	}
}
