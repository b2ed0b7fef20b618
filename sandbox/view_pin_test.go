package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// viewRoot is a canonical temporary folder of the test's.
func viewRoot(t *testing.T) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mkfile(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
}

func entryOf(m Manifest, path string) (Entry, bool) {
	for _, e := range m {
		if e.Path == path {
			return e, true
		}
	}
	return Entry{}, false
}

// A program the run starts brings its folder (its install's root) into
// view, and the folder of the link it is started by; a program inside the
// view already adds nothing.
func TestPinViewProgramsFolders(t *testing.T) {
	root := viewRoot(t)
	env := []string{"HOME=" + filepath.Join(root, "home"), "PATH=" + filepath.Join(root, "nothing")}
	os.MkdirAll(filepath.Join(root, "home"), 0o755)
	real := filepath.Join(root, "srv/tool/bin/prog")
	mkfile(t, real, 0o755)
	links := filepath.Join(root, "links")
	os.MkdirAll(links, 0o755)
	if err := os.Symlink(real, filepath.Join(links, "prog")); err != nil {
		t.Fatal(err)
	}
	m := BuildManifest(ViewSpec{Env: env, Programs: []string{filepath.Join(links, "prog"), "/usr/bin/env", "relative/prog"}})
	e, ok := entryOf(m, filepath.Join(root, "srv/tool"))
	if !ok || e.How != ReadOnlyBind || e.Why != "the folder of prog, which the run starts" {
		t.Errorf("the program's install root: %+v %v in %v", e, ok, m.Paths(ReadOnlyBind))
	}
	e, ok = entryOf(m, links)
	if !ok || e.How != ReadOnlyBind || e.Why != "the folder of prog, which the run starts" {
		t.Errorf("the link's folder: %+v %v in %v", e, ok, m.Paths(ReadOnlyBind))
	}
	for _, p := range m.Paths(ReadOnlyBind) {
		if strings.Contains(p, "relative") || p == "/usr/bin" {
			t.Errorf("%s laid: %v", p, m.Paths(ReadOnlyBind))
		}
	}
	// The program started by its real path: one folder, not two.
	m = BuildManifest(ViewSpec{Env: env, Programs: []string{real}})
	n := 0
	for _, e := range m {
		if strings.HasPrefix(e.Why, "the folder of prog") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d entries for the program's folder: %v", n, m)
	}
	// A program inside a folder already shown: the folder is not narrowed
	// nor laid twice, and the link's own folder (shown) adds nothing.
	m = BuildManifest(ViewSpec{Env: env, AllowRead: []string{filepath.Join(root, "srv")}, Programs: []string{real, filepath.Join(links, "prog")}})
	for _, e := range m {
		if e.Path == filepath.Join(root, "srv/tool") {
			t.Errorf("a program already shown laid again: %v", m)
		}
	}
	if _, ok := entryOf(m, links); !ok {
		t.Errorf("the link's folder: %v", m)
	}
	// Both folders shown already (the PATH entry and where its link leads).
	m = BuildManifest(ViewSpec{Env: []string{"HOME=" + filepath.Join(root, "home"), "PATH=" + links}, Programs: []string{filepath.Join(links, "prog")}})
	if _, ok := entryOf(m, links); !ok {
		t.Errorf("the PATH entry: %v", m)
	}
	for _, e := range m {
		if strings.HasPrefix(e.Why, "the folder of") {
			t.Errorf("a shown program adds %+v", e)
		}
	}
}

// HOME must be absolute and exist to be used: the folders kept of it and ~
// in the loop file's paths.
func TestPinViewHome(t *testing.T) {
	root := viewRoot(t)
	home := filepath.Join(root, "home")
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	os.MkdirAll(filepath.Join(home, ".config/git"), 0o755)
	os.WriteFile(filepath.Join(home, ".gitconfig"), nil, 0o644)
	os.WriteFile(filepath.Join(home, "sock"), nil, 0o644)
	spec := ViewSpec{HomeKeep: []string{".claude"}, AllowSockets: []string{"~/sock"}}
	spec.Env = []string{"HOME=" + home, "PATH="}
	m := BuildManifest(spec)
	if e, ok := entryOf(m, filepath.Join(home, ".gitconfig")); !ok || e.Why != "~/.gitconfig: an agent CLI's or git's settings" {
		t.Errorf("git's settings: %+v", e)
	}
	spec.AllowRead = []string{" ~/.claude ", "~"}
	m = BuildManifest(spec)
	for _, p := range []string{filepath.Join(home, ".claude"), filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config/git")} {
		if e, ok := entryOf(m, p); !ok || e.How != ReadOnlyBind {
			if !m.covers(p) {
				t.Errorf("%s not shown: %v", p, m)
			}
		}
	}
	if e, ok := entryOf(m, home); !ok || e.Why != "sandbox.allow_read" {
		t.Errorf("allow_read ~: %+v", e)
	}
	if e, ok := entryOf(m, filepath.Join(home, "sock")); !ok || e.How != Socket {
		t.Errorf("allow_sockets ~/sock: %+v", e)
	}
	for _, h := range []string{"home", filepath.Join(root, "missing"), ""} {
		spec.Env = []string{"HOME=" + h, "PATH="}
		m = BuildManifest(spec)
		for _, e := range m {
			if strings.Contains(e.Path, root) || strings.Contains(e.Path, "~") {
				t.Errorf("HOME=%q: %+v laid", h, e)
			}
		}
	}
	// HOME reached through a link is used by its real path.
	os.Symlink(home, filepath.Join(root, "linked"))
	spec.Env = []string{"HOME=" + filepath.Join(root, "linked"), "PATH="}
	m = BuildManifest(spec)
	if _, ok := entryOf(m, filepath.Join(home, "sock")); !ok {
		t.Errorf("HOME through a link: %v", m)
	}
}

func TestPinViewExpandHome(t *testing.T) {
	for _, c := range []struct{ in, home, want string }{
		{"~", "/h", "/h"}, {"~/a/b", "/h", "/h/a/b"}, {" ~/a ", "/h", "/h/a"}, {"~a", "/h", "~a"},
		{"~/a", "", "~/a"}, {"~", "", "~"}, {"/x/~/a", "/h", "/x/~/a"},
	} {
		if got := expandHome(c.in, c.home); got != c.want {
			t.Errorf("expandHome(%q, %q) = %q, want %q", c.in, c.home, got, c.want)
		}
	}
}

// The fresh folders, and XDG_RUNTIME_DIR when it is not inside one of
// them.
func TestPinViewFresh(t *testing.T) {
	for _, c := range []struct {
		xdg  string
		want []string
	}{
		{"/run/user/1000", []string{"/tmp", "/var/tmp", "/run", "/dev/shm"}},
		{"/tmp", []string{"/tmp", "/var/tmp", "/run", "/dev/shm"}},
		{"relative/run", []string{"/tmp", "/var/tmp", "/run", "/dev/shm"}},
		{"/srv/run//1000/", []string{"/tmp", "/var/tmp", "/run", "/dev/shm", "/srv/run/1000"}},
	} {
		m := BuildManifest(ViewSpec{Env: []string{"PATH=", "XDG_RUNTIME_DIR=" + c.xdg}})
		got := m.Paths(Fresh)
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("XDG_RUNTIME_DIR=%s: fresh %v, want %v", c.xdg, got, c.want)
		}
		for _, e := range m {
			if e.How == Fresh && e.Why == "" {
				t.Errorf("%+v", e)
			}
		}
	}
	m := BuildManifest(ViewSpec{Env: []string{"PATH=", "XDG_RUNTIME_DIR=/srv/x"}})
	if e, _ := entryOf(m, "/srv/x"); e.Why != "XDG_RUNTIME_DIR, empty: no socket of the user's session" {
		t.Errorf("%+v", e)
	}
}

// Only read-only and writable entries show a path; a fresh folder or a
// socket does not show what is under it.
func TestPinViewCovers(t *testing.T) {
	m := Manifest{{Path: "/a", How: ReadOnlyBind}, {Path: "/b", How: WritableBind}, {Path: "/c", How: Fresh}, {Path: "/d", How: Socket}}
	for p, want := range map[string]bool{"/a": true, "/a/x": true, "/ab": false, "/b/y": true, "/c": false, "/c/x": false, "/d": false, "/": false} {
		if got := m.covers(p); got != want {
			t.Errorf("covers(%s) = %v", p, got)
		}
	}
	if got := m.Paths(Fresh); !slices.Equal(got, []string{"/c"}) {
		t.Errorf("Paths(Fresh) = %v", got)
	}
	if got := (Manifest{}).Paths(ReadOnlyBind); got != nil {
		t.Errorf("%v", got)
	}
}

// tidy: parents before children, each path once, a read-only entry inside
// another shown entry dropped, other kinds inside one kept.
func TestPinViewTidy(t *testing.T) {
	m := Manifest{
		{Path: "/a/b/c", How: ReadOnlyBind, Why: "1"},
		{Path: "/x/y", How: Fresh, Why: "2"},
		{Path: "/a/b", How: ReadOnlyBind, Why: "3"},
		{Path: "/w/in", How: ReadOnlyBind, Why: "4"},
		{Path: "/a/b/s", How: Socket, Why: "5"},
		{Path: "/w", How: WritableBind, Why: "6"},
		{Path: "/x/y", How: ReadOnlyBind, Why: "7"},
		{Path: "/q", How: ReadOnlyBind, Why: "8"},
		{Path: "/q", How: ReadOnlyBind, Why: "9"},
		{Path: "/z", How: Socket, Why: "10"},
	}
	var got []string
	for _, e := range m.tidy() {
		got = append(got, e.Path+" "+e.Why)
	}
	want := []string{"/w 6", "/q 8", "/z 10", "/x/y 2", "/a/b 3", "/a/b/s 5"}
	if !slices.Equal(got, want) {
		t.Errorf("tidy: %q, want %q", got, want)
	}
	// "/" sorts first, whatever its slash count.
	got = nil
	for _, e := range (Manifest{{Path: "/a", How: Fresh}, {Path: "/", How: WritableBind}, {Path: "/b", How: Fresh}}).tidy() {
		got = append(got, e.Path)
	}
	if !slices.Equal(got, []string{"/", "/a", "/b"}) {
		t.Errorf("tidy with /: %q", got)
	}
	got = nil
	for _, e := range (Manifest{{Path: "/a/b", How: Fresh}, {Path: "/", How: Fresh}}).tidy() {
		got = append(got, e.Path)
	}
	if !slices.Equal(got, []string{"/", "/a/b"}) {
		t.Errorf("tidy with / last: %q", got)
	}
}

func TestPinViewToolchainRoot(t *testing.T) {
	root := viewRoot(t)
	home := filepath.Join(root, "home")
	os.MkdirAll(filepath.Join(home, "gp/src"), 0o755)
	mkfile(t, filepath.Join(home, "fp/src"), 0o644) // src a file: no GOPATH
	for _, c := range []struct{ dir, home, want string }{
		{filepath.Join(home, "gp/bin"), home, filepath.Join(home, "gp/bin")},
		{filepath.Join(home, "gp/sub"), home, filepath.Join(home, "gp")},
		{filepath.Join(home, "fp/bin"), home, filepath.Join(home, "fp")},
		{filepath.Join(home, "bin"), home, filepath.Join(home, "bin")},
		{filepath.Join(home, ".local/bin"), home, filepath.Join(home, ".local/bin")},
		{filepath.Join(home, ".local/share/x/bin"), home, filepath.Join(home, ".local/share/x")},
		{filepath.Join(home, ".config/x/sbin"), home, filepath.Join(home, ".config/x")},
		{filepath.Join(home, ".cache/x"), home, filepath.Join(home, ".cache/x")},
		{filepath.Join(home, ".cache"), home, filepath.Join(home, ".cache")},
		{filepath.Join(home, ".tool/a/b/bin"), home, filepath.Join(home, ".tool")},
		{home, home, home},
		{"/srv/t/bin", "", "/srv/t"},
		{"/srv/t/x", "", "/srv/t/x"},
		{filepath.Join(home, "gp/bin"), "", filepath.Join(home, "gp")},
		{"/opt/bin", home, "/opt/bin"},
		{"/opt/a/b/c", home, "/opt/a"},
		{"/opt", home, "/opt"},
		{"/optx/bin", home, "/optx"},
		{"/usr/local/bin", home, "/usr/local/bin"},
		{"/bin", home, "/bin"},
		{"/srv/shims", home, "/srv"},
	} {
		if got := toolchainRoot(c.dir, c.home); got != c.want {
			t.Errorf("toolchainRoot(%s, %q) = %s, want %s", c.dir, c.home, got, c.want)
		}
	}
}

func TestPinViewInstallRoot(t *testing.T) {
	for dir, want := range map[string]string{
		"/node_modules/pkg/bin":              "/node_modules/pkg",
		"/a/node_modules":                    "/a/node_modules",
		"/a/node_modules/.bin":               "/a/node_modules",
		"/a/node_modules/x/node_modules/y/b": "/a/node_modules",
		"/a/node_modulesx/bin":               "/a/node_modulesx",
	} {
		if got := installRoot(dir, "/home/u"); got != want {
			t.Errorf("installRoot(%s) = %s, want %s", dir, got, want)
		}
	}
}

// linkTargets: the folders the links of a PATH folder lead to, each once,
// at most maxLinkTargets; nothing for the system's folders or a huge one.
func TestPinViewLinkTargets(t *testing.T) {
	root := viewRoot(t)
	bin := filepath.Join(root, "bin")
	os.MkdirAll(bin, 0o755)
	for i := 0; i < maxLinkTargets+3; i++ {
		f := filepath.Join(root, fmt.Sprintf("t%02d", i), "prog")
		mkfile(t, f, 0o755)
		os.Symlink(f, filepath.Join(bin, fmt.Sprintf("p%02d", i)))
	}
	mkfile(t, filepath.Join(root, "t00/other"), 0o755)
	os.Symlink(filepath.Join(root, "t00/other"), filepath.Join(bin, "a-same-folder"))
	mkfile(t, filepath.Join(bin, "plain"), 0o755)
	os.Symlink(filepath.Join(bin, "plain"), filepath.Join(bin, "inside"))
	os.Symlink(filepath.Join(root, "missing"), filepath.Join(bin, "broken"))
	got := linkTargets(bin)
	if len(got) != maxLinkTargets {
		t.Fatalf("%d targets: %v", len(got), got)
	}
	for i, d := range got {
		if want := filepath.Join(root, fmt.Sprintf("t%02d", i)); d != want {
			t.Errorf("target %d: %s, want %s", i, d, want)
		}
	}
	small := filepath.Join(root, "small")
	os.MkdirAll(small, 0o755)
	os.Symlink(filepath.Join(root, "t01/prog"), filepath.Join(small, "one"))
	if got := linkTargets(small); !slices.Equal(got, []string{filepath.Join(root, "t01")}) {
		t.Errorf("one link: %v", got)
	}
	for _, d := range []string{"/usr/bin", "/usr", "/bin", "/sbin", filepath.Join(root, "missing")} {
		if got := linkTargets(d); got != nil {
			t.Errorf("linkTargets(%s) = %v", d, got)
		}
	}
	// A folder of more than 2000 entries is not read; 2000 are.
	big := filepath.Join(root, "big")
	os.MkdirAll(big, 0o755)
	os.Symlink(filepath.Join(root, "t02/prog"), filepath.Join(big, "link"))
	for i := 1; i < 2000; i++ {
		os.WriteFile(filepath.Join(big, fmt.Sprintf("f%04d", i)), nil, 0o644)
	}
	if got := linkTargets(big); len(got) != 1 {
		t.Errorf("2000 entries: %v", got)
	}
	os.WriteFile(filepath.Join(big, "f2000"), nil, 0o644)
	if got := linkTargets(big); got != nil {
		t.Errorf("2001 entries: %v", got)
	}
}

// The PATH's links into installs elsewhere bring those installs into the
// view.
func TestPinViewPathLinks(t *testing.T) {
	root := viewRoot(t)
	home := filepath.Join(root, "home")
	os.MkdirAll(home, 0o755)
	real := filepath.Join(root, "inst/node_modules/pkg/bin/cli")
	mkfile(t, real, 0o755)
	bin := filepath.Join(root, "pathbin")
	os.MkdirAll(bin, 0o755)
	os.Symlink(real, filepath.Join(bin, "cli"))
	m := BuildManifest(ViewSpec{Env: []string{"HOME=" + home, "PATH=" + bin}})
	if e, ok := entryOf(m, filepath.Join(root, "inst/node_modules")); !ok || e.Why != "programs of "+bin+" lead there" {
		t.Errorf("the install: %+v in %v", e, m)
	}
}

func TestPinViewArgs(t *testing.T) {
	root := viewRoot(t)
	os.MkdirAll(filepath.Join(root, "ro"), 0o755)
	os.Symlink(filepath.Join(root, "ro"), filepath.Join(root, "deep-link"))
	os.WriteFile(filepath.Join(root, "sock"), nil, 0o644)
	m := Manifest{
		{Path: "/usr", How: ReadOnlyBind},
		{Path: "/tmp", How: Fresh},
		{Path: filepath.Join(root, "ro"), How: ReadOnlyBind},
		{Path: filepath.Join(root, "deep-link"), How: ReadOnlyBind},
		{Path: filepath.Join(root, "missing"), How: ReadOnlyBind},
		{Path: filepath.Join(root, "w"), How: WritableBind},
		{Path: "/dev/shm", How: Fresh},
		{Path: filepath.Join(root, "sock"), How: Socket},
		{Path: "/run", How: Fresh},
	}
	if _, err := os.Lstat("/bin"); err == nil {
		m = append(m, Entry{Path: "/bin", How: ReadOnlyBind})
	}
	got := strings.Join(viewArgs(m), " ")
	want := "--dev /dev --proc /proc --tmpfs /tmp --tmpfs /run --ro-bind /usr /usr --ro-bind " + filepath.Join(root, "ro") + " " + filepath.Join(root, "ro") +
		" --ro-bind " + filepath.Join(root, "deep-link") + " " + filepath.Join(root, "deep-link")
	if fi, err := os.Lstat("/bin"); err == nil {
		if fi.Mode()&os.ModeSymlink != 0 {
			t, _ := os.Readlink("/bin")
			want += " --symlink " + t + " /bin"
		} else {
			want += " --ro-bind /bin /bin"
		}
	}
	if got != want {
		t.Errorf("viewArgs:\n%s\nwant\n%s", got, want)
	}
	if got := strings.Join(socketArgs(m), " "); got != "--bind "+filepath.Join(root, "sock")+" "+filepath.Join(root, "sock") {
		t.Errorf("socketArgs: %s", got)
	}
	if got := socketArgs(Manifest{{Path: "/usr", How: ReadOnlyBind}}); got != nil {
		t.Errorf("socketArgs: %v", got)
	}
}

// What HOME's layer keeps: the manifest's entries under HOME (not HOME
// itself, not a fresh folder), the loop folder and the other trees there.
func TestPinViewHomeKeep(t *testing.T) {
	root := viewRoot(t)
	home := filepath.Join(root, "home")
	for _, d := range []string{".claude", "loop", "w", "shown", "prog/bin"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	mkfile(t, filepath.Join(home, "prog/bin/tool"), 0o755)
	p := Policy{
		Dir:      filepath.Join(home, "loop"),
		Writable: []string{filepath.Join(home, "w"), "/srv/elsewhere", home},
		Shown:    []string{filepath.Join(home, "shown")},
		View: ViewSpec{
			Env:      []string{"HOME=" + home, "PATH=", "XDG_RUNTIME_DIR=" + filepath.Join(home, "run")},
			HomeKeep: []string{".claude"},
		},
	}
	want := []string{filepath.Join(home, ".claude"), filepath.Join(home, "loop"), filepath.Join(home, "prog"), filepath.Join(home, "shown"), filepath.Join(home, "w")}
	got := p.homeKeep(home, filepath.Join(home, "prog/bin/tool"))
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("homeKeep %q\nwant %q", got, want)
	}
}

// Policy.manifest adds the program started, by an absolute path only, and
// leaves the policy's own list alone.
func TestPinViewPolicyManifest(t *testing.T) {
	root := viewRoot(t)
	prog := filepath.Join(root, "srv/bin/prog")
	mkfile(t, prog, 0o755)
	other := filepath.Join(root, "other/bin/x")
	mkfile(t, other, 0o755)
	progs := make([]string, 1, 4)
	progs[0] = other
	p := Policy{View: ViewSpec{Env: []string{"PATH="}, Programs: progs}}
	m := p.manifest(prog)
	if _, ok := entryOf(m, filepath.Join(root, "srv")); !ok {
		t.Errorf("the program's folder: %v", m)
	}
	if _, ok := entryOf(m, filepath.Join(root, "other")); !ok {
		t.Errorf("the policy's program: %v", m)
	}
	if len(p.View.Programs) != 1 || progs[:2][1] != "" {
		t.Errorf("the policy's programs changed: %v %v", p.View.Programs, progs[:2])
	}
	for _, path := range []string{"", "srv/bin/prog"} {
		for _, e := range p.manifest(path) {
			if e.Path == filepath.Join(root, "srv") {
				t.Errorf("manifest(%q) shows %s", path, e.Path)
			}
		}
	}
}

// Landlock's read grants: /proc, /dev, the read-only entries and sockets,
// and more; folders and files apart; what does not exist left out.
func TestPinViewReadRules(t *testing.T) {
	root := viewRoot(t)
	os.MkdirAll(filepath.Join(root, "ro"), 0o755)
	os.WriteFile(filepath.Join(root, "file"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "sock"), nil, 0o644)
	os.MkdirAll(filepath.Join(root, "more"), 0o755)
	os.MkdirAll(filepath.Join(root, "fresh"), 0o755)
	os.MkdirAll(filepath.Join(root, "w"), 0o755)
	m := Manifest{
		{Path: filepath.Join(root, "ro"), How: ReadOnlyBind},
		{Path: filepath.Join(root, "file"), How: ReadOnlyBind},
		{Path: filepath.Join(root, "sock"), How: Socket},
		{Path: filepath.Join(root, "fresh"), How: Fresh},
		{Path: filepath.Join(root, "w"), How: WritableBind},
		{Path: filepath.Join(root, "missing"), How: ReadOnlyBind},
	}
	dirs, files := readRules(m, filepath.Join(root, "more"), filepath.Join(root, "gone"))
	if want := []string{"/proc", "/dev", filepath.Join(root, "ro"), filepath.Join(root, "more")}; !slices.Equal(dirs, want) {
		t.Errorf("dirs %q, want %q", dirs, want)
	}
	if want := []string{filepath.Join(root, "file"), filepath.Join(root, "sock")}; !slices.Equal(files, want) {
		t.Errorf("files %q, want %q", files, want)
	}
}

// The variables that lead to the user's services, each of them.
func TestPinViewServiceEnv(t *testing.T) {
	var env []string
	for _, k := range dropEnv {
		if !IsServiceEnv(k) {
			t.Errorf("%s is not a service variable", k)
		}
		env = append(env, k+"=x")
	}
	env = append(env, "KEEP=1", "SSH_AUTH_SOCKX=2", "=3", "NOEQUALS")
	if got := DropServiceEnv(env); !slices.Equal(got, []string{"KEEP=1", "SSH_AUTH_SOCKX=2", "=3", "NOEQUALS"}) {
		t.Errorf("%q", got)
	}
	if IsServiceEnv("") || IsServiceEnv("ssh_auth_sock") {
		t.Error("IsServiceEnv")
	}
	if got := DropServiceEnv(nil); len(got) != 0 {
		t.Errorf("%q", got)
	}
}
