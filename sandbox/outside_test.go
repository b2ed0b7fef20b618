package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A failed command's output names the paths it could not find: those that
// exist on the host and are not in the view are named, each once, with the
// field that lets them in; paths in the view, paths that exist nowhere and
// lines that say nothing of a missing path are not.
func TestOutsideView(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	data := filepath.Join(root, "opt", "data")
	fix := filepath.Join(data, "fixture.json")
	seen := filepath.Join(root, "tree", "x.txt")
	for _, f := range []string{fix, seen, filepath.Join(data, "b.txt"), filepath.Join(data, "c.txt"), filepath.Join(data, "d.txt")} {
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, []byte("x"), 0o644)
	}
	inView := func(p string) bool { return Within(p, filepath.Join(root, "tree")) }
	out := strings.Join([]string{
		"cat: " + fix + ": No such file or directory",
		"ls: cannot access '" + data + "': No such file or directory",
		"Error: ENOENT: no such file or directory, open '" + fix + "'",
		"cat: " + seen + ": No such file or directory",        // in the view
		"cat: /nowhere/at/all: No such file or directory",     // nowhere
		"using " + filepath.Join(data, "b.txt") + " as input", // not a failure line
		"FileNotFoundError: [Errno 2] No such file or directory: '" + filepath.Join(data, "c.txt") + "'",
		"sh: 1: " + filepath.Join(data, "d.txt") + ": not found",
	}, "\n")
	got := OutsideView(out, inView)
	want := []string{fix, data, filepath.Join(data, "c.txt")} // three at most
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OutsideView:\n%q\nwant\n%q", got, want)
	}
	if got := OutsideView("all tests passed\n", inView); got != nil {
		t.Errorf("nothing missing: %q", got)
	}
	if h := OutsideViewHint(fix); h != fix+" is outside the sandbox's view; add it to sandbox.allow_read in loop.yaml" {
		t.Errorf("hint: %q", h)
	}
	sock := filepath.Join(root, "s.sock")
	if ln, err := net.Listen("unix", sock); err == nil {
		defer ln.Close()
		if h := OutsideViewHint(sock); !strings.HasSuffix(h, "add it to sandbox.allow_sockets in loop.yaml") {
			t.Errorf("a socket's hint: %q", h)
		}
	}
	if got := ViewHintLines("FAIL: x\n  " + OutsideViewHint(fix) + "\nmore"); len(got) != 1 || got[0] != OutsideViewHint(fix) {
		t.Errorf("ViewHintLines: %q", got)
	}
	if hs := OutsideViewHints("cat: "+fix+": No such file or directory", inView); len(hs) != 1 || !strings.HasPrefix(hs[0], fix+" is outside") {
		t.Errorf("hints: %q", hs)
	}
}

// What a run sees: the manifest, the loop folder and its trees, HOME only
// where the view keeps it; hidden and masked paths are kept out on
// purpose, never named. With the sandbox off
// everything is in view.
func TestInView(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(root, "home")
	for _, d := range []string{"home/.claude", "home/notes", "loop", "state", "other"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	p := Policy{Kind: Bwrap, Dir: filepath.Join(root, "loop"), Writable: []string{home}, Hidden: []string{filepath.Join(root, "state")},
		View: ViewSpec{Env: []string{"HOME=" + home, "PATH=/usr/bin"}, HomeKeep: []string{".claude"}}}
	for path, want := range map[string]bool{
		filepath.Join(root, "loop", "a.go"):         true,
		filepath.Join(home, ".claude", "x.json"):    true,
		filepath.Join(home, "notes", "diary.txt"):   false,
		filepath.Join(root, "other", "secret"):      false,
		filepath.Join(root, "state", "engine.json"): true,
		"/usr/bin/env": true,
	} {
		if got := p.InView(path); got != want {
			t.Errorf("Policy.InView(%s) = %v", path, got)
		}
	}
	p.Kind = Off
	if !p.InView(filepath.Join(root, "other", "secret")) {
		t.Error("with the sandbox off a path is outside the view")
	}
}
