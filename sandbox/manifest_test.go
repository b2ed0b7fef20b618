package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// manifestFixture: a HOME with a toolchain on PATH, an agent CLI's folder,
// a project and a private file no list names.
func manifestFixture(t *testing.T) (root string, env []string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home/.tool/bin", "home/.tool/lib", "home/.claude", "home/projects/other", "home/notes", "opt/thing/bin", "data"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "home/notes/diary.txt"), []byte("x"), 0o644)
	home := filepath.Join(root, "home")
	env = []string{"HOME=" + home, "PATH=" + filepath.Join(home, ".tool/bin") + ":relative/bin:/usr/bin", "XDG_RUNTIME_DIR=/somewhere/run-1000", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1"}
	return root, env
}

func TestBuildManifestByConstruction(t *testing.T) {
	root, env := manifestFixture(t)
	home := filepath.Join(root, "home")
	m := BuildManifest(ViewSpec{Env: env, HomeKeep: []string{".claude", ".missing"}, AllowRead: []string{filepath.Join(root, "data")}, AllowSockets: []string{"~/notes/diary.txt"}})
	ro := m.Paths(ReadOnlyBind)
	for _, want := range []string{"/usr", "/etc/passwd", filepath.Join(home, ".tool"), filepath.Join(home, ".claude"), filepath.Join(root, "data")} {
		if _, err := os.Lstat(want); err == nil && !slices.Contains(ro, want) {
			t.Errorf("%s is not shown read-only: %q", want, ro)
		}
	}
	if !slices.Contains(m.Paths(Socket), filepath.Join(home, "notes/diary.txt")) {
		t.Errorf("allow_sockets not laid: %q", m.Paths(Socket))
	}
	for _, f := range []string{"/tmp", "/var/tmp", "/run", "/dev/shm", "/somewhere/run-1000"} {
		if !slices.Contains(m.Paths(Fresh), f) {
			t.Errorf("%s is not fresh: %q", f, m.Paths(Fresh))
		}
	}
	for _, p := range []string{"/tmp", "/var/tmp", "/run", "/home", home, filepath.Join(home, "projects"), filepath.Join(home, "notes/diary.txt"), filepath.Join(root, "opt")} {
		if m.covers(p) {
			t.Errorf("%s is in the view: %q", p, ro)
		}
	}
	for _, e := range m {
		if e.Path == "/" || e.Path == "/etc" || e.Why == "" {
			t.Errorf("entry %+v", e)
		}
		if strings.Contains(e.Path, ".missing") {
			t.Errorf("a missing path is laid: %+v", e)
		}
	}
	lines := strings.Join(m.Lines(), "\n")
	if !strings.Contains(lines, "/etc/{passwd,") || !strings.Contains(lines, "PATH entry") || !strings.Contains(lines, "sandbox.allow_read") {
		t.Errorf("lines:\n%s", lines)
	}
}

func TestToolchainRoot(t *testing.T) {
	root, _ := manifestFixture(t)
	home := filepath.Join(root, "home")
	os.MkdirAll(filepath.Join(home, "go/src/project"), 0o755)
	os.MkdirAll(filepath.Join(home, "go/bin"), 0o755)
	for _, c := range []struct{ dir, want string }{
		{filepath.Join(home, ".tool/bin"), filepath.Join(home, ".tool")},
		{filepath.Join(home, ".pyenv/plugins/x/shims"), filepath.Join(home, ".pyenv")},
		{filepath.Join(home, ".local/bin"), filepath.Join(home, ".local/bin")},
		{filepath.Join(home, "bin"), filepath.Join(home, "bin")},
		{filepath.Join(home, "go/bin"), filepath.Join(home, "go/bin")},
		{"/usr/local/go/bin", "/usr/local/go"},
		{"/usr/local/bin", "/usr/local/bin"},
		{"/opt/thing/sub/bin", "/opt/thing"},
		{"/bin", "/bin"},
	} {
		if got := toolchainRoot(c.dir, home); got != c.want {
			t.Errorf("toolchainRoot(%s) = %s, want %s", c.dir, got, c.want)
		}
	}
}

func TestDropServiceEnv(t *testing.T) {
	env := []string{"PATH=/usr/bin", "SSH_AUTH_SOCK=/tmp/a", "TMUX=/tmp/t,1,0", "TMUX_PANE=%1", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus", "DBUS_SYSTEM_BUS_ADDRESS=x", "GPG_AGENT_INFO=x", "XDG_RUNTIME_DIR=/run/user/0", "HOME=/h", "TMUXLIKE=kept"}
	got := DropServiceEnv(env)
	if !slices.Equal(got, []string{"PATH=/usr/bin", "HOME=/h", "TMUXLIKE=kept"}) {
		t.Fatalf("%q", got)
	}
	if !IsServiceEnv("SSH_AUTH_SOCK") || IsServiceEnv("PATH") {
		t.Fatal("IsServiceEnv")
	}
}

// The bubblewrap view starts from an empty root: no bind of /, the host's
// /tmp, /var/tmp and /run replaced by empty folders.
func TestBwrapArgsBuildTheView(t *testing.T) {
	root, env := manifestFixture(t)
	dir := filepath.Join(root, "home/projects/loop")
	os.MkdirAll(dir, 0o755)
	p := Policy{Kind: Bwrap, Dir: dir, View: ViewSpec{Env: env}}
	a := strings.Join(p.bwrapArgs(filepath.Join(root, "tmp"), "/bin/true", nil), " ")
	if strings.Contains(a, "--ro-bind / /") || strings.Contains(a, " "+filepath.Join(root, "home")+" ") {
		t.Fatalf("the host is in the view: %s", a)
	}
	for _, want := range []string{"--tmpfs /tmp", "--tmpfs /var/tmp", "--tmpfs /run", "--ro-bind /usr /usr", "--bind " + dir + " " + dir, "--ro-bind " + filepath.Join(root, "home/.tool")} {
		if !strings.Contains(a, want) {
			t.Errorf("no %q in %s", want, a)
		}
	}
	if strings.Index(a, "--tmpfs /tmp") > strings.Index(a, "--bind "+dir) {
		t.Errorf("/tmp laid after the loop folder: %s", a)
	}
}

// A program linked into an npm install (the agent CLIs) brings the whole
// install's node_modules into view: it requires its sibling packages.
func TestInstallRootOfNodeModules(t *testing.T) {
	for dir, want := range map[string]string{
		"/work/p/.cache/agent-clis/node_modules/@openai/codex/bin":     "/work/p/.cache/agent-clis/node_modules",
		"/work/p/.cache/agent-clis/node_modules/@google/gemini/bundle": "/work/p/.cache/agent-clis/node_modules",
		"/srv/tools/go/bin": "/srv/tools/go",
	} {
		if got := installRoot(dir, "/home/u"); got != want {
			t.Errorf("installRoot(%s) = %s, want %s", dir, got, want)
		}
	}
}
