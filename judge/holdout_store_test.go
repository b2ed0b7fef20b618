package judge

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
)

// The holdout files leave the loop folder for the engine's store while it
// runs, are read and laid from there, and come back when it ends (or
// when it starts again after a crash); a file the folder holds again
// keeps the folder's.
func TestHoldoutStore(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "tests"), 0o755)
	os.WriteFile(filepath.Join(dir, "tests", "hidden_test.go"), []byte("package x\n\nfunc TestHidden(t *testing.T) {}\n"), 0o640)
	os.WriteFile(filepath.Join(dir, "h.sh"), []byte("secret"), 0o600)
	j := &Judge{Dir: dir, holdouts: []string{"h.sh", "tests/hidden_test.go"}}
	if err := j.KeepHoldouts(); err != nil {
		t.Fatal(err)
	}
	store := loopdir.PrivateOf(dir).HoldoutFiles()
	for _, rel := range j.holdouts {
		if _, err := os.Lstat(filepath.Join(dir, rel)); !os.IsNotExist(err) {
			t.Errorf("%s still in the loop folder (%v)", rel, err)
		}
		if _, err := os.Lstat(filepath.Join(store, rel)); err != nil {
			t.Errorf("%s not in the store: %v", rel, err)
		}
		if got := j.holdoutSource(rel); got != filepath.Join(store, rel) {
			t.Errorf("%s read from %s", rel, got)
		}
	}
	if got := j.holdoutSource("other.go"); got != filepath.Join(dir, "other.go") {
		t.Errorf("a file that is no holdout read from %s", got)
	}
	if !j.goTestNames()["TestHidden"] {
		t.Error("the kept holdout file's tests are not known to the reading of Go runs")
	}
	hide, put := j.holdoutView()
	if len(hide) != 2 || hide[0] != "h.sh" || len(put) != 2 || put[1].To != "tests/hidden_test.go" || put[1].From != filepath.Join(store, "tests", "hidden_test.go") || put[1].Mode != 0o640 {
		t.Fatalf("view: hide %v put %+v", hide, put)
	}
	// Kept once: a second call leaves the store as it is.
	if err := j.KeepHoldouts(); err != nil {
		t.Fatal(err)
	}
	// The user wrote h.sh again meanwhile: the folder's file stays.
	os.WriteFile(filepath.Join(dir, "h.sh"), []byte("the user's"), 0o600)
	if err := RestoreHoldouts(dir); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "h.sh")); string(data) != "the user's" {
		t.Errorf("h.sh: %q", data)
	}
	fi, err := os.Stat(filepath.Join(dir, "tests", "hidden_test.go"))
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("hidden_test.go not back: %v %v", fi, err)
	}
	if _, err := os.Lstat(store); !os.IsNotExist(err) {
		t.Errorf("the store is not emptied: %v", err)
	}
	if hide, put := j.holdoutView(); len(hide)+len(put) != 0 {
		t.Errorf("an empty store lays %v %v", hide, put)
	}
	// Nothing to restore: no error.
	if err := RestoreHoldouts(dir); err != nil {
		t.Fatal(err)
	}
}

// A file the store keeps is never put back through a link on its way.
func TestRestoreHoldoutsNoLink(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(dir, "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "d", "h"), []byte("secret"), 0o600)
	j := &Judge{Dir: dir, holdouts: []string{"d/h"}}
	if err := j.KeepHoldouts(); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "d"))
	os.Symlink(elsewhere, filepath.Join(dir, "d"))
	if err := RestoreHoldouts(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(elsewhere, "h")); !os.IsNotExist(err) {
		t.Fatal("restored through a link")
	}
	if _, err := os.Lstat(filepath.Join(loopdir.PrivateOf(dir).HoldoutFiles(), "d", "h")); err != nil {
		t.Fatalf("the store lost the file: %v", err)
	}
}
