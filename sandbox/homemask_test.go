//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// HOME's layer is built by construction: the run sees of the real HOME
// only what the view keeps (the CLI's folder, git's settings, a large
// file and a folder the loop file lets in), each as it is, whatever else
// HOME holds, and also what HOME got after the command was made (the old
// whiteouts were laid from a listing taken then). What the run writes in
// HOME, in a kept folder or beside, lands in the layer and is there for
// the next run; the real HOME is never written.
func TestBuiltHome(t *testing.T) {
	need(t, Bwrap)
	if err := LayerProbe(); err != nil {
		t.Skipf("no copy-on-write layer here: %v", err)
	}
	l := newLayout(t)
	h := l.home
	write := func(rel, body string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(h, rel)), 0o755)
		if err := os.WriteFile(filepath.Join(h, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("notes/diary.txt", "DIARY\n")
	write(".gitconfig", "[user]\n\tname = me\n")
	write(".config/gh/hosts.yml", "TOKEN\n")
	write(".config/git/ignore", "*.o\n")
	write("data/big.bin", "")
	if err := os.Truncate(filepath.Join(h, "data", "big.bin"), 65<<20); err != nil { // sparse: larger than a copy
		t.Fatal(err)
	}
	write("shared/fixture.txt", "FIXTURE\n")
	up := filepath.Join(l.state, "home-layer")
	lay := Layer{Target: h, Upper: filepath.Join(up, "upper"), Work: filepath.Join(up, "work")}
	dl := Layer{Target: l.dir, Upper: filepath.Join(l.state, "dir-layer", "upper"), Work: filepath.Join(l.state, "dir-layer", "work")}
	for _, x := range []Layer{lay, dl} {
		if _, err := PrepareLayer(x); err != nil {
			t.Fatal(err)
		}
	}
	p := l.policy(Bwrap)
	p.Layers, p.HomeMask = []Layer{dl, lay}, true
	p.View = ViewSpec{Env: []string{"HOME=" + h, "PATH=" + os.Getenv("PATH")}, HomeKeep: []string{".claude", ".claude.json"}, AllowRead: []string{"~/data/big.bin", "~/shared"}}
	script := `cd "$HOME"
echo "ls: $(ls -A | tr '\n' ' ')"
echo "config: $(ls -A .config | tr '\n' ' ')"
cat notes/diary.txt .config/gh/hosts.yml late.txt 2>&1
cat .gitconfig .claude/settings.json shared/fixture.txt .config/git/ignore
wc -c < data/big.bin
echo mine > .claude/mine.txt && echo kept-own > own.txt && echo x >> .gitconfig
echo y >> data/big.bin 2>/dev/null || echo "big: read-only"
cat own-before.txt 2>&1
echo done`
	for i, want := range []string{"own-before.txt: No such file", "EARLIER"} {
		cmd, err := wrapped(p, script, []string{"HOME=" + h})
		if err != nil {
			t.Fatal(err)
		}
		// Made after the command: the old listing never saw it.
		write("late.txt", "LATE\n")
		out, err := cmd.CombinedOutput()
		s := string(out)
		if err != nil || !strings.Contains(s, "\ndone") {
			t.Fatalf("run %d: %v\n%s", i, err, s)
		}
		for _, leak := range []string{"DIARY", "TOKEN", "LATE"} {
			if strings.Contains(s, leak) {
				t.Errorf("run %d: %q of the real HOME is in the view:\n%s", i, leak, s)
			}
		}
		ls, _, _ := strings.Cut(s, "\ncat:")
		for _, name := range []string{"notes", "gh", "late.txt", ".local"} {
			if strings.Contains(ls+" ", " "+name+" ") {
				t.Errorf("run %d: %s of the real HOME is listed:\n%s", i, name, ls)
			}
		}
		for _, in := range []string{"name = me", "{}", "FIXTURE", "*.o", "68157440", "big: read-only", want} {
			if !strings.Contains(s, in) {
				t.Errorf("run %d: %q is not in the view:\n%s", i, in, s)
			}
		}
		os.Remove(filepath.Join(h, "late.txt"))
		os.WriteFile(filepath.Join(lay.Upper, "own-before.txt"), []byte("EARLIER\n"), 0o644)
	}
	for rel, body := range map[string]string{".claude/mine.txt": "mine\n", "own.txt": "kept-own\n"} {
		if b, err := os.ReadFile(filepath.Join(lay.Upper, rel)); err != nil || string(b) != body {
			t.Errorf("%s in the layer: %q %v", rel, b, err)
		}
		if _, err := os.Stat(filepath.Join(h, rel)); err == nil {
			t.Errorf("%s reached the real HOME", rel)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(h, ".gitconfig")); string(b) != "[user]\n\tname = me\n" {
		t.Errorf("the real ~/.gitconfig was written: %q", b)
	}
}
