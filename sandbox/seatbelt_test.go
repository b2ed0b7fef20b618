package sandbox

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// macCanon resolves paths as macOS would for the tests, on any platform:
// /tmp and /var are links into /private; the paths in missing do not exist.
func macCanon(missing ...string) func(string) (string, error) {
	gone := map[string]bool{}
	for _, m := range missing {
		gone[m] = true
	}
	return func(p string) (string, error) {
		p = filepath.Clean(p)
		if gone[p] {
			return "", os.ErrNotExist
		}
		for _, l := range []string{"/tmp", "/var", "/etc"} {
			if p == l || strings.HasPrefix(p, l+"/") {
				return "/private" + p, nil
			}
		}
		return p, nil
	}
}

// macPolicy is a loop's policy as loop.policyFor builds it on a Mac.
func macPolicy() Policy {
	return Policy{
		Kind: Seatbelt,
		Dir:  "/Users/ada/work/proj",
		Writable: []string{
			"/Users/ada/.looprinter/homes/proj", // the agent's private HOME
			"/Users/ada/Library/Caches/go-build",
			"/tmp/shared-cache",
			"/Users/ada/.config/missing", // does not exist: left out
			"/Users/ada/work/proj",       // the loop folder again: once
		},
		ReadOnly: []string{
			"/Users/ada/work/proj/loop.yaml",
			"/Users/ada/work/proj/working-records",
			"/Users/ada/work/proj/.git",
			"/Users/ada/work/proj/tests/golden/expected.txt",
			"/Users/ada/.looprinter/homes/proj/.looprinter-state",
			"/Users/ada/.looprinter/state",  // outside every writable tree: already read-only
			"/Users/ada/work/proj/gone.txt", // does not exist: left out
		},
	}
}

func macProfile(t *testing.T, p Policy) string {
	t.Helper()
	in, err := seatbeltInputFor(p, "/var/folders/xy/T/looprinter-sandbox-0123", macCanon("/Users/ada/.config/missing", "/Users/ada/work/proj/gone.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return seatbeltProfile(in)
}

func TestSeatbeltProfileGolden(t *testing.T) {
	got := macProfile(t, macPolicy())
	golden := filepath.Join("testdata", "seatbelt.sb")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./sandbox/ -run Seatbelt -update to write it)", err)
	}
	if got != string(want) {
		t.Fatalf("the profile differs from %s (go test ./sandbox/ -run Seatbelt -update rewrites it):\n%s", golden, got)
	}
}

func TestSeatbeltProfileCanonicalPaths(t *testing.T) {
	got := macProfile(t, macPolicy())
	for _, want := range []string{
		`(subpath "/private/var/folders/xy/T/looprinter-sandbox-0123")`,
		`(subpath "/private/tmp/shared-cache")`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the profile lacks %s", want)
		}
	}
	for _, not := range []string{`"/tmp/`, `"/var/`, "missing", "gone.txt", `"/Users/ada/.looprinter/state"`} {
		if strings.Contains(got, not) {
			t.Errorf("the profile holds %s", not)
		}
	}
	if n := strings.Count(got, `(subpath "/Users/ada/work/proj")`); n != 1 {
		t.Errorf("the loop folder is granted %d times, want once", n)
	}
}

func TestSeatbeltProfileDeniesAfterAllowing(t *testing.T) {
	got := macProfile(t, macPolicy())
	deny := strings.Index(got, "(deny default)")
	allowRead := strings.Index(got, "(allow file-read*)")
	allowWrite := strings.Index(got, "(allow file-write*\n  (subpath")
	denyWrite := strings.Index(got, "(deny file-write*")
	denyUnlink := strings.Index(got, "(deny file-write-unlink")
	if deny < 0 || allowRead < 0 || allowWrite < 0 || denyWrite < 0 || denyUnlink < 0 {
		t.Fatalf("a block is missing:\n%s", got)
	}
	if !(deny < allowRead && allowRead < allowWrite && allowWrite < denyWrite && denyWrite < denyUnlink) {
		t.Fatalf("rules out of order (the last match wins): deny default %d, allow read %d, allow write %d, deny write %d, deny unlink %d", deny, allowRead, allowWrite, denyWrite, denyUnlink)
	}
	// Every read-only path inside a writable tree is denied, after every
	// allow that covers it.
	for _, r := range []string{"loop.yaml", "working-records", ".git", "tests/golden/expected.txt"} {
		rule := `(subpath "/Users/ada/work/proj/` + r + `")`
		i := strings.LastIndex(got, rule)
		if i < denyWrite {
			t.Errorf("%s is not denied after the allows", rule)
		}
	}
	// The folders on the way to a read-only file cannot be renamed away.
	for _, p := range []string{"/Users/ada/work/proj/tests", "/Users/ada/work/proj/tests/golden", "/Users/ada/work/proj", "/Users/ada/work/proj/tests/golden/expected.txt"} {
		if i := strings.Index(got, `(literal "`+p+`")`); i < denyUnlink {
			t.Errorf("%s is not kept from being renamed", p)
		}
	}
	if !strings.Contains(got, "(allow network*)") {
		t.Error("the network the policy shares is not allowed")
	}
}

func TestSeatbeltProfileWithoutNetwork(t *testing.T) {
	got := seatbeltProfile(seatbeltInput{Writable: []string{"/w"}})
	if strings.Contains(got, "(allow network") {
		t.Fatalf("network allowed:\n%s", got)
	}
}

func TestSeatbeltProfileQuotes(t *testing.T) {
	p := macPolicy()
	p.Dir = `/Users/ada/we"ird\proj`
	p.ReadOnly = []string{`/Users/ada/we"ird\proj/.git`}
	got := macProfile(t, p)
	for _, want := range []string{
		`(subpath "/Users/ada/we\"ird\\proj")`,
		`(subpath "/Users/ada/we\"ird\\proj/.git")`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the profile lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, `we"ird`) {
		t.Error("an unescaped quote reached the profile")
	}
	for in, want := range map[string]string{
		`a"b`:      `"a\"b"`,
		`a\b`:      `"a\\b"`,
		"a\nb\x01": `"a\nb\x01"`,
		`\"`:       `"\\\""`,
		"plain/é":  `"plain/é"`,
	} {
		if got := sbplString(in); got != want {
			t.Errorf("sbplString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestSeatbeltInputNeedsTheLoopFolder(t *testing.T) {
	p := macPolicy()
	p.Dir = "/Users/ada/nowhere"
	if _, err := seatbeltInputFor(p, "/tmp/x", macCanon("/Users/ada/nowhere")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want the loop folder's", err)
	}
}

func TestSeatbeltGuaranteesSayWhatIsNotVerified(t *testing.T) {
	g := strings.Join(Guarantees(Seatbelt), "\n")
	if !strings.Contains(g, "not yet exercised on a Mac by this project's CI") {
		t.Fatalf("Guarantees(seatbelt) does not say it is unverified:\n%s", g)
	}
}
