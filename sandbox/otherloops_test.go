package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// otherFixture: a work tree with the tree svc/, a sibling loop folder b/
// (tracked files, an ignored holdout and records), and b/lib/, which holds
// only tracked files.
func otherFixture(t *testing.T) (top, tree string, loops []OtherLoop) {
	top, _ = canonical(t.TempDir())
	for _, d := range []string{"svc", "b/lib", "b/working-records/transcripts"} {
		os.MkdirAll(filepath.Join(top, d), 0o755)
	}
	for _, f := range []string{"b/loop.yaml", "b/a.txt", "b/lib/x.go", "b/lib/y.go", "b/hidden.sh", "b/working-records/transcripts/t.log"} {
		os.WriteFile(filepath.Join(top, f), []byte(f), 0o644)
	}
	os.Symlink("a.txt", filepath.Join(top, "b", "link"))
	loops = []OtherLoop{{
		Dir:     filepath.Join(top, "b"),
		Tracked: []string{"loop.yaml", "a.txt", "lib/x.go", "lib/y.go", "link", "gone.txt"},
		Others:  []string{"hidden.sh", "working-records/"},
	}}
	return top, filepath.Join(top, "svc"), loops
}

// Another loop's folder around the tree is laid as an empty folder with
// its tracked entries bound one by one (a link as a link, a missing one
// left out), then made read-only: its holdout file and records are
// nowhere in the arguments.
func TestOthersBwrapShowsOnlyTracked(t *testing.T) {
	top, tree, loops := otherFixture(t)
	others := planOthers(loops, top, tree)
	if len(others) != 1 || others[0].holds {
		t.Fatalf("planned %+v, want b's folder, not holding the tree", others)
	}
	allowed := filepath.Join(top, "b", "lib")
	args := othersBwrap(others, Manifest{{Path: allowed, How: ReadOnlyBind, Why: "sandbox.allow_read"}}, []string{tree})
	if i := slices.Index(args, allowed); i < 0 || args[i-1] != "--ro-bind" || i < slices.Index(args, "--tmpfs") {
		t.Errorf("sandbox.allow_read's path inside the folder is not laid again after it: %v", args)
	}
	line := strings.Join(args, " ")
	b := filepath.Join(top, "b")
	for _, want := range []string{"--tmpfs " + b, "--ro-bind " + b + "/a.txt", "--ro-bind " + b + "/lib/x.go", "--symlink a.txt " + b + "/link", "--remount-ro " + b} {
		if !strings.Contains(line, want) {
			t.Errorf("arguments lack %q: %s", want, line)
		}
	}
	for _, no := range []string{"hidden.sh", "working-records", "gone.txt", "--ro-bind " + b + " "} {
		if strings.Contains(line+" ", no) {
			t.Errorf("arguments hold %q: %s", no, line)
		}
	}
	if i, j := slices.Index(args, "--tmpfs"), slices.Index(args, "--remount-ro"); i < 0 || j < i {
		t.Errorf("the folder is not made before it is made read-only: %v", args)
	}
	reads := othersReads(others)
	if slices.Contains(reads, filepath.Join(b, "link")) || !slices.Contains(reads, filepath.Join(b, "a.txt")) {
		t.Errorf("Landlock's grants %v: want the tracked files, no link", reads)
	}
	for _, r := range reads {
		if strings.Contains(r, "hidden") || strings.Contains(r, "working-records") {
			t.Errorf("Landlock grants %s", r)
		}
	}
}

// A loop folder above the tree keeps its folder writable for the tree's
// mounts and lays none of its entries inside the tree; loops inside the
// tree or inside another loop's folder, or outside the work tree, are not
// laid on their own.
func TestPlanOthersHoldsAndSkips(t *testing.T) {
	top, tree, loops := otherFixture(t)
	os.MkdirAll(filepath.Join(tree, "inner"), 0o755)
	loops = append(loops,
		OtherLoop{Dir: top, Tracked: []string{"top.txt", "svc/main.go", "b/a.txt"}},
		OtherLoop{Dir: filepath.Join(tree, "inner")},
		OtherLoop{Dir: filepath.Join(top, "b", "lib")},
		OtherLoop{Dir: tree},
	)
	os.WriteFile(filepath.Join(top, "top.txt"), nil, 0o644)
	others := planOthers(loops, top, tree)
	if len(others) != 1 || others[0].dir != top || !others[0].holds {
		t.Fatalf("planned %+v, want only the loop at the top, holding the tree", others)
	}
	for _, s := range others[0].shown {
		if Within(s, tree) {
			t.Errorf("an entry inside the tree laid: %s", s)
		}
	}
	if line := strings.Join(othersBwrap(others, nil, nil), " "); strings.Contains(line, "--remount-ro") {
		t.Errorf("the folder holding the tree made read-only: %s", line)
	}
	if got := planOthers(loops, "", tree); len(got) != 0 {
		t.Errorf("no work tree around: planned %+v", got)
	}
}

// Past the budget, a folder that held only tracked entries is laid whole;
// the loop folder itself, a folder holding an untracked entry and the way
// to the tree never are.
func TestCollapse(t *testing.T) {
	// (planOthers passes no entry inside the tree, svc/keep.)
	tracked := []string{"loop.yaml", "lib/x.go", "lib/deep/y.go", "tests/t_test.go", "tests/data/d.txt", "svc/z.go"}
	got := collapse(tracked, []string{"tests/hidden_test.go"}, "svc/keep")
	slices.Sort(got)
	want := []string{"lib", "loop.yaml", "svc/z.go", "tests/data", "tests/t_test.go"}
	if !slices.Equal(got, want) {
		t.Errorf("collapse = %v, want %v", got, want)
	}
	var many []string
	for i := 0; i < 3000; i++ {
		many = append(many, "pkg/sub/file-with-a-long-name-"+strings.Repeat("x", 20)+strconv.Itoa(i)+".go")
	}
	top := t.TempDir()
	others := planOthers([]OtherLoop{{Dir: filepath.Join(top, "b"), Tracked: many}}, top, filepath.Join(top, "svc"))
	if len(others) != 0 {
		t.Fatalf("a loop folder that does not exist planned: %+v", others)
	}
	os.MkdirAll(filepath.Join(top, "b"), 0o755)
	os.MkdirAll(filepath.Join(top, "svc"), 0o755)
	ctop, _ := canonical(top)
	others = planOthers([]OtherLoop{{Dir: filepath.Join(top, "b"), Tracked: many}}, ctop, filepath.Join(ctop, "svc"))
	if len(others) != 1 || len(others[0].shown) != 1 || others[0].shown[0] != filepath.Join(ctop, "b", "pkg") {
		t.Errorf("3000 tracked files past the budget: laid %v, want the one clean folder", others)
	}
}
