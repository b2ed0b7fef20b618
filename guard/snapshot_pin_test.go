//go:build !windows

package guard

import (
	"os"
	"path/filepath"
	"testing"
)

// keep is asked only about a regular file whose content changed: an edit
// it accepts stays, one it refuses is put back with its reason; a deleted
// file, or a link pointed elsewhere, is put back whatever keep would say.
func TestPinSnapshotKeepDecidesOnlyFileEdits(t *testing.T) {
	dir, priv, _, _ := guardFixture(t)
	p := filepath.Join(dir, "tests", "check.sh")
	if err := os.Symlink("check.sh", filepath.Join(dir, "tests", "link")); err != nil {
		t.Fatal(err)
	}
	g, err := takeSnapshot(dir, priv, []File{{Path: "tests/check.sh", Rule: "a rule"}, {Path: "tests/link", Rule: "a rule"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	answer, why := true, ""
	keep := func(rel string, old, cur []byte) (bool, string) {
		asked = append(asked, rel+": "+string(old)+" -> "+string(cur))
		return answer, why
	}

	// An accepted edit stays.
	os.WriteFile(p, []byte("#!/bin/sh\nexit 0 # kept\n"), 0o755)
	ts, err := g.check(dir, priv, keep, nil, nil, nil)
	if err != nil || len(ts) != 0 {
		t.Fatalf("an accepted edit: %+v %v", ts, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "#!/bin/sh\nexit 0 # kept\n" {
		t.Fatalf("an accepted edit was put back: %q", b)
	}
	if len(asked) != 1 || asked[0] != "tests/check.sh: #!/bin/sh\nexit 0\n -> #!/bin/sh\nexit 0 # kept\n" {
		t.Fatalf("keep was asked %q", asked)
	}

	// A refused edit is put back, with keep's reason.
	os.WriteFile(p, []byte("#!/bin/sh\nexit 1\n"), 0o755)
	answer, why = false, "it weakens the check"
	ts, _ = g.check(dir, priv, keep, nil, nil, nil)
	checkRestored(t, dir, ts, "modified")
	if ts[0].Why != "it weakens the check" {
		t.Errorf("why %q", ts[0].Why)
	}

	// Deleted, or a link pointed elsewhere: put back, keep never asked.
	answer, why, asked = true, "", nil
	os.Remove(p)
	ts, _ = g.check(dir, priv, keep, nil, nil, nil)
	checkRestored(t, dir, ts, "deleted")
	os.Remove(filepath.Join(dir, "tests", "link"))
	os.Symlink("/etc/passwd", filepath.Join(dir, "tests", "link"))
	ts, _ = g.check(dir, priv, keep, nil, nil, nil)
	if len(ts) != 1 || ts[0].File != "tests/link" || ts[0].What != "modified" {
		t.Fatalf("a retargeted link: %+v", ts)
	}
	if l, _ := os.Readlink(filepath.Join(dir, "tests", "link")); l != "check.sh" {
		t.Errorf("the link points at %q", l)
	}
	if len(asked) != 0 {
		t.Errorf("keep was asked about %q", asked)
	}
}

// A protected file the run removed and wrote again shows as created too:
// it is put back from the snapshot, never removed as a file the agent may
// not add; nor is a folder on the way to one. A new file a rule covers is
// removed.
func TestPinSnapshotCreatedAtAProtectedPath(t *testing.T) {
	dir, priv, _, g := guardFixture(t)
	p := filepath.Join(dir, "tests", "check.sh")
	os.Remove(p)
	os.WriteFile(p, []byte("#!/bin/sh\nexit 0 # forged, longer\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "free.txt"), []byte("x"), 0o644)
	protectNew := func(rel string) (string, bool) { return "new rule", rel != "free.txt" }
	ts, err := g.check(dir, priv, nil, []string{"tests", "tests/check.sh", "new.txt", "free.txt"}, protectNew, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].File != "new.txt" || ts[0].What != "created" || ts[0].Rule != "new rule" {
		t.Fatalf("tamper %+v", ts)
	}
	checkRestored(t, dir, ts[1:], "modified")
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); err == nil {
		t.Error("a new protected file stays")
	}
	if _, err := os.Stat(filepath.Join(dir, "free.txt")); err != nil {
		t.Error("a new file no rule covers was removed")
	}
}
