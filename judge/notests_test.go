package judge

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// A check that exits 0 having run no test is warned of at the baseline
// and NOT VERIFIED in a judging gate, until a pass of it runs tests; one
// whose output has no counts, or that failed, is not.
func TestNoTestsRan(t *testing.T) {
	j, evs := newJudge(t, &spec.Loop{Sandbox: "off"})
	nv := []string{}
	j.AddNotVerified = func(s string) {
		if !slices.Contains(nv, s) {
			nv = append(nv, s)
		}
	}
	j.DropNotVerified = func(s string) { nv = slices.DeleteFunc(nv, func(x string) bool { return x == s }) }
	none := `printf '?   \texample.com/m\t[no test files]\n'`
	plain := `echo all good`
	failed := `printf 'no tests ran in 0.01s\n'; exit 5`
	ctx := context.Background()

	j.RunChecks(ctx, "baseline", []string{none, plain, failed})
	var warned []string
	for _, ev := range *evs {
		if ev.Event == record.Warning && ev.Kind == "no_tests_ran" {
			warned = append(warned, ev.Message)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "the check `"+none+"` ran no tests: it exited 0 and its runner's counts (go) say no test ran") {
		t.Fatalf("baseline warnings %q", warned)
	}
	if len(nv) != 0 {
		t.Fatalf("the baseline added NOT VERIFIED notes %q", nv)
	}

	j.RunChecks(ctx, "objective", []string{none, plain, failed})
	if len(nv) != 1 || nv[0] != noTestsNote(none) {
		t.Fatalf("NOT VERIFIED %q, want the note of %q only", nv, none)
	}
	// A task gate (a rollback's, a best-of's) judges nothing for the loop.
	j.DropNotVerified(noTestsNote(none))
	j.RunChecks(ctx, "task", []string{none})
	if len(nv) != 0 {
		t.Fatalf("a task gate added %q", nv)
	}

	// The same check running tests drops the note.
	out := filepath.Join(j.Dir, "out.txt")
	same := "cat out.txt"
	os.WriteFile(out, []byte("ok  \texample.com/m\t0.01s [no tests to run]\n"), 0o644)
	j.RunChecks(ctx, "objective", []string{same})
	if len(nv) != 1 || nv[0] != noTestsNote(same) {
		t.Fatalf("NOT VERIFIED %q, want the note of %q", nv, same)
	}
	os.WriteFile(out, []byte("?   \texample.com/m\t[no test files]\nok  \texample.com/m/sub\t0.01s\n"), 0o644)
	j.RunChecks(ctx, "objective", []string{same})
	if len(nv) != 0 {
		t.Fatalf("NOT VERIFIED %q after the check ran tests", nv)
	}
}

// A note of a check that ran no tests goes once the check is no longer in
// the loop file; the notes of its checks stay.
func TestNoTestsNoteRefreshed(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Verify: []string{"go test ./..."}})
	keep, _ := j.RefreshVacuous([]string{noTestsNote("go test ./..."), noTestsNote("cargo test"), "sandbox: off"}, false)
	if !slices.Equal(keep, []string{noTestsNote("go test ./..."), "sandbox: off"}) {
		t.Errorf("kept %q", keep)
	}
	if c, ok := noTestsNoteCheck(noTestsNote("a `b` c")); !ok || c != "a `b` c" {
		t.Errorf("noTestsNoteCheck: %q %v", c, ok)
	}
}
