package wave

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The kept attempt is the best one that passes on the applied tree: one
// that passed only on its layer is taken back and the next tried; none
// passing there keeps none; an error ends the tries.
func TestKeepTriesTheRankedAttempts(t *testing.T) {
	pass := func(i, lines int) Attempt {
		return Attempt{Index: i, Pass: true, Change: Change{Lines: lines, Files: 1}}
	}
	attempts := []Attempt{pass(0, 30), {Index: 1, Change: Change{Lines: 1}}, pass(2, 5), pass(3, 12)}
	if got := Ranked(attempts); !slices.Equal(got, []int{2, 3, 0}) {
		t.Fatalf("Ranked = %v, want [2 3 0]", got)
	}
	var tried []int
	kept, ok, err := Keep(attempts, func(i int) (bool, error) {
		tried = append(tried, i)
		return i != 2, nil // the smallest passes only while judged
	})
	if err != nil || !ok || kept != 3 || !slices.Equal(tried, []int{2, 3}) {
		t.Fatalf("Keep = %d, %v, %v after %v; want 3 after [2 3]", kept, ok, err, tried)
	}
	tried = nil
	if _, ok, _ := Keep(attempts, func(i int) (bool, error) { tried = append(tried, i); return false, nil }); ok || !slices.Equal(tried, []int{2, 3, 0}) {
		t.Fatalf("none passing on the applied tree: kept %v after %v", ok, tried)
	}
	boom := errors.New("boom")
	if _, _, err := Keep(attempts, func(int) (bool, error) { return false, boom }); err != boom {
		t.Fatalf("an error of a try: %v", err)
	}
	if _, ok, _ := Keep([]Attempt{{Index: 0}}, func(int) (bool, error) { t.Fatal("tried a failing attempt"); return true, nil }); ok {
		t.Fatal("no passing attempt, yet one kept")
	}
}

// An apply taken back leaves the folder as it was: files it changed hold
// their old text, files and folders it created are gone, a folder it
// replaced is whole again, and the paths skip names are not touched.
func TestUndoRestoresTheFolder(t *testing.T) {
	dir, upper, tmp := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "undo")
	write := func(root, rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return "<absent>"
		}
		return string(b)
	}
	write(dir, "a.txt", "old a\n")
	write(dir, "pkg/x.go", "old x\n")
	write(dir, "working-records/log.jsonl", "before\n")
	write(upper, "a.txt", "new a\n")
	write(upper, "pkg/x.go", "new x\n")
	write(upper, "pkg/y.go", "new y\n")
	write(upper, "fresh/deep/z.txt", "z\n")
	write(upper, "working-records/log.jsonl", "forged\n")
	u, err := Backup(dir, upper, tmp, func(rel string) bool { return within(rel, "working-records") })
	if err != nil {
		t.Fatal(err)
	}
	// The apply, and the engine writing its records meanwhile.
	for _, rel := range []string{"a.txt", "pkg/x.go", "pkg/y.go", "fresh/deep/z.txt"} {
		b, _ := os.ReadFile(filepath.Join(upper, filepath.FromSlash(rel)))
		write(dir, rel, string(b))
	}
	write(dir, "working-records/log.jsonl", "before\nafter\n")
	if err := u.Restore(); err != nil {
		t.Fatal(err)
	}
	u.Drop()
	for rel, want := range map[string]string{"a.txt": "old a\n", "pkg/x.go": "old x\n", "pkg/y.go": "<absent>",
		"fresh/deep/z.txt": "<absent>", "working-records/log.jsonl": "before\nafter\n"} {
		if got := read(rel); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "fresh")); err == nil {
		t.Error("the folder the apply created is still there")
	}
	if _, err := os.Lstat(tmp); err == nil {
		t.Error("Drop left the kept versions")
	}
}

// No passing attempt is dropped before the kept one has passed on the
// applied tree; the failing ones go first; when none passes there, every
// one is dropped.
func TestKeeperDropsPassingOnlyAfterTheKeptPassed(t *testing.T) {
	pass := func(i, lines int) Attempt {
		return Attempt{Index: i, Pass: true, Change: Change{Lines: lines, Files: 1}}
	}
	attempts := []Attempt{{Index: 0}, pass(1, 3), pass(2, 9), {Index: 3}}
	var log []string
	k := Keeper{
		Apply: func(i int) (bool, error) {
			log = append(log, "apply "+string(rune('0'+i)))
			if i == 1 {
				attempts[1].Pass = false // passed only while judged
				return false, nil
			}
			return true, nil
		},
		Drop: func(i int) { log = append(log, "drop "+string(rune('0'+i))) },
	}
	kept, ok, err := k.Keep(attempts)
	want := []string{"drop 0", "drop 3", "apply 1", "apply 2", "drop 1"}
	if err != nil || !ok || kept != 2 || !slices.Equal(log, want) {
		t.Fatalf("Keep = %d, %v, %v; calls %v, want %v", kept, ok, err, log, want)
	}
	log = nil
	attempts = []Attempt{pass(0, 1), pass(1, 2)}
	k.Apply = func(i int) (bool, error) { log = append(log, "apply "+string(rune('0'+i))); return false, nil }
	if _, ok, _ := k.Keep(attempts); ok || !slices.Equal(log, []string{"apply 0", "apply 1", "drop 0", "drop 1"}) {
		t.Fatalf("none kept: %v, calls %v", ok, log)
	}
}
