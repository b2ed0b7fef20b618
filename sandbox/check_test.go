//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A check's code that dials a TCP address (CHECKBOX_TEST_DIAL): the test
// binary doubles as the client, so no tool of the machine is needed.
func init() {
	if addr := os.Getenv("CHECKBOX_TEST_DIAL"); addr != "" {
		network := "tcp"
		if strings.HasPrefix(addr, "/") {
			network = "unix"
		}
		c, err := net.DialTimeout(network, addr, 2*time.Second)
		if err != nil {
			fmt.Println("dial failed:", err)
			os.Exit(3)
		}
		c.Close()
		fmt.Println("connected")
		os.Exit(0)
	}
}

// boxFixture is a check's world: a tree with a file, a HOME of the test's
// own (the user's, as far as the check knows), and the engine's private
// folder with a secret in it.
type boxFixture struct {
	tree, home, priv, secret string
	env                      []string
}

func newBoxFixture(t *testing.T) boxFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := boxFixture{tree: filepath.Join(root, "tree"), home: filepath.Join(root, "home"), priv: filepath.Join(root, "state")}
	for _, d := range []string{f.tree, filepath.Join(f.home, ".config", "go"), filepath.Join(f.priv, "engine")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must(filepath.Join(f.tree, "deliverable.txt"), "original\n")
	must(filepath.Join(f.home, ".config", "go", "env"), "GOFLAGS=-count=1\n")
	f.secret = filepath.Join(f.priv, "engine", "holdout-log")
	must(f.secret, "hidden test failed: TestSecret\n")
	f.env = append(withoutEnv(withoutEnv(os.Environ(), "HOME"), "XDG_CONFIG_HOME"), "HOME="+f.home)
	return f
}

func (f boxFixture) box(t *testing.T, kind string, o CheckBoxOptions) *CheckBox {
	t.Helper()
	if kind != Off {
		need(t, kind)
	}
	o.Kind, o.Tree, o.Env = kind, f.tree, f.env
	if o.Hide == nil {
		o.Hide = []string{f.priv}
	}
	b, err := NewCheckBox(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// runBox runs line in the box and returns its output and exit code.
func runBox(t *testing.T, b *CheckBox, dir, line string, env []string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, cleanup, err := b.Command(ctx, dir, line, env)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	cleanup()
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
		if code < 0 {
			t.Fatalf("check did not run: %v", err)
		}
	}
	return out.String(), code
}

var confinedKinds = []string{Bwrap, Landlock}

// What a check's code writes — HOME (the user's Go settings), the host's
// /tmp, the tree — is gone after the check; without the box it all stays.
func TestCheckBoxWritesVanish(t *testing.T) {
	for _, kind := range append(confinedKinds, Off) {
		t.Run(kind, func(t *testing.T) {
			f := newBoxFixture(t)
			b := f.box(t, kind, CheckBoxOptions{})
			hostTmp := filepath.Join(os.TempDir(), fmt.Sprintf("looprinter-checkbox-test-%d-%s", os.Getpid(), kind))
			shm := fmt.Sprintf("/dev/shm/looprinter-checkbox-test-%d-%s", os.Getpid(), kind)
			t.Cleanup(func() { os.Remove(hostTmp); os.Remove(shm) })
			line := `echo x > "$HOME/x" 2>/dev/null; echo x > /tmp/` + filepath.Base(hostTmp) + ` 2>/dev/null; echo x > ` + hostTmp + ` 2>/dev/null
echo forged > deliverable.txt 2>/dev/null
echo x > ` + shm + ` 2>/dev/null
mkdir -p "$HOME/.config/go" && echo 'GOFLAGS=-run=^TestNothing$' > "$HOME/.config/go/env" 2>/dev/null
echo GOFLAGS=-run=x > ` + filepath.Join(f.home, ".config", "go", "env") + ` 2>/dev/null
cat deliverable.txt; true`
			out, _ := runBox(t, b, f.tree, line, f.env)
			survived := []string{}
			if _, err := os.Stat(filepath.Join(f.home, "x")); err == nil {
				survived = append(survived, "$HOME/x")
			}
			if _, err := os.Stat(hostTmp); err == nil {
				survived = append(survived, hostTmp)
			}
			if _, err := os.Stat(shm); err == nil {
				survived = append(survived, shm)
			}
			if b, _ := os.ReadFile(filepath.Join(f.tree, "deliverable.txt")); string(b) != "original\n" {
				survived = append(survived, "the tree's file")
			}
			if b, _ := os.ReadFile(filepath.Join(f.home, ".config", "go", "env")); string(b) != "GOFLAGS=-count=1\n" {
				survived = append(survived, "~/.config/go/env")
			}
			if kind == Off {
				if len(survived) < 5 {
					t.Fatalf("unconfined, the writes should have stayed; only %v did (output %q)", survived, out)
				}
				return
			}
			if len(survived) > 0 {
				t.Fatalf("a check's writes survived it: %v (output %q)", survived, out)
			}
			if kind == Bwrap && !strings.Contains(out, "forged") {
				t.Fatalf("under bwrap the check writes its own layer and should read back what it wrote; output %q", out)
			}
		})
	}
}

// A check cannot connect to a service on the host's loopback.
func TestCheckBoxNoHostNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range append(confinedKinds, Off) {
		for _, network := range []string{CheckNetworkNone, CheckNetworkHost} {
			t.Run(kind+"/"+network, func(t *testing.T) {
				if kind == Landlock && network == CheckNetworkNone && landlockABI() > 0 && landlockABI() < 4 {
					t.Skipf("Landlock ABI %d has no network rules (CheckGaps says so)", landlockABI())
				}
				f := newBoxFixture(t)
				b := f.box(t, kind, CheckBoxOptions{Network: network})
				// The dialer is a copy of the test binary in the tree: the
				// check's /tmp is its own, where the go tool's build is not.
				dialer := filepath.Join(f.tree, "dialer")
				if err := CopyFile(exe, dialer, 0o755); err != nil {
					t.Fatal(err)
				}
				env := append(f.env, "CHECKBOX_TEST_DIAL="+ln.Addr().String())
				out, code := runBox(t, b, f.tree, "./dialer", env)
				connected := code == 0 && strings.Contains(out, "connected")
				refused := code == 3 && strings.Contains(out, "dial failed")
				if want := kind == Off || network == CheckNetworkHost; connected != want || refused == want {
					t.Fatalf("connected to the host's %s: %v, want %v (exit %d, output %q)", ln.Addr(), connected, want, code, out)
				}
			})
		}
	}
}

// A check cannot read the engine's private folder, but sees the views the
// box is given inside it (the holdout files) and the tree.
func TestCheckBoxHidesPrivate(t *testing.T) {
	for _, kind := range append(confinedKinds, Off) {
		t.Run(kind, func(t *testing.T) {
			f := newBoxFixture(t)
			view := filepath.Join(f.priv, "engine", "holdout_test.go")
			if err := os.WriteFile(view, []byte("package holdout\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			b := f.box(t, kind, CheckBoxOptions{Views: []string{view}})
			out, _ := runBox(t, b, f.tree, "cat "+shellQuote(f.secret)+"; ls "+shellQuote(filepath.Dir(f.secret))+"; cat "+shellQuote(view)+"; cat deliverable.txt", f.env)
			leaked := strings.Contains(out, "TestSecret") || strings.Contains("\n"+out, "\nholdout-log\n")
			if kind == Off {
				if !leaked {
					t.Fatalf("unconfined, the secret should be readable: %q", out)
				}
				return
			}
			if leaked {
				t.Fatalf("a check read the engine's private folder: %q", out)
			}
			if !strings.Contains(out, "package holdout") || !strings.Contains(out, "original") {
				t.Fatalf("the view and the tree should be readable: %q", out)
			}
		})
	}
}

// A check has no capability, as root too.
func TestCheckBoxNoCapabilities(t *testing.T) {
	for _, kind := range append(confinedKinds, Off) {
		t.Run(kind, func(t *testing.T) {
			if kind == Off && os.Getuid() != 0 {
				t.Skip("unconfined, only root has capabilities to show")
			}
			f := newBoxFixture(t)
			b := f.box(t, kind, CheckBoxOptions{})
			out, _ := runBox(t, b, f.tree, "grep CapEff /proc/self/status", f.env)
			zero := strings.Contains(out, "0000000000000000")
			if zero != (kind != Off) {
				t.Fatalf("CapEff %q (confined: %v)", strings.TrimSpace(out), kind != Off)
			}
		})
	}
}

// What a check starts in the background (a new session, reparented) is
// gone after the check.
func TestCheckBoxEndsBackground(t *testing.T) {
	for _, kind := range append(confinedKinds, Off) {
		t.Run(kind, func(t *testing.T) {
			if kind == Landlock && CgroupProbe() != nil {
				t.Skipf("Landlock without a cgroup cannot end a check's daemons (CheckGaps says so): %v", CgroupProbe())
			}
			f := newBoxFixture(t)
			b := f.box(t, kind, CheckBoxOptions{})
			token := fmt.Sprintf("looprinter-checkbox-bg-%d-%d", os.Getpid(), time.Now().UnixNano())
			// The process carries the token in its environment: it is found
			// wherever its PID namespace put it.
			line := `(setsid sleep 300 </dev/null >/dev/null 2>&1 &); sleep 0.2; echo started`
			out, _ := runBox(t, b, f.tree, line, append(f.env, "SBX_TOKEN="+token))
			if !strings.Contains(out, "started") {
				t.Fatalf("the check did not run: %q", out)
			}
			left := tokenProcs(token)
			for _, pid := range left {
				defer killPid(pid)
			}
			if kind == Off {
				if len(left) == 0 {
					t.Fatal("unconfined, the background process should have stayed")
				}
				return
			}
			if len(left) > 0 {
				t.Fatalf("the check's background processes %v outlived it", left)
			}
		})
	}
}

// The bytecode settings every confined check gets.
func TestCheckBoxPythonEnv(t *testing.T) {
	for _, kind := range confinedKinds {
		t.Run(kind, func(t *testing.T) {
			f := newBoxFixture(t)
			b := f.box(t, kind, CheckBoxOptions{})
			out, _ := runBox(t, b, f.tree, `echo "$PYTHONDONTWRITEBYTECODE:$PYTHONPYCACHEPREFIX"`, append(f.env, "PYTHONDONTWRITEBYTECODE=", "PYTHONPYCACHEPREFIX=/agent/planted"))
			if !strings.HasPrefix(out, "1:/") || strings.Contains(out, "planted") {
				t.Fatalf("python settings %q", out)
			}
		})
	}
}

// Under bwrap the tree's view can lose files and gain others, and none of
// it reaches the tree.
func TestCheckBoxView(t *testing.T) {
	f := newBoxFixture(t)
	if err := os.WriteFile(filepath.Join(f.tree, "gamed_test.go"), []byte("agent"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := f.box(t, Bwrap, CheckBoxOptions{Remove: []string{"gamed_test.go"}, Put: []ViewFile{{From: f.secret, To: "holdout/h.txt", Mode: 0o644}}})
	out, _ := runBox(t, b, f.tree, "ls; cat holdout/h.txt", f.env)
	if strings.Contains(out, "gamed_test.go") || !strings.Contains(out, "TestSecret") {
		t.Fatalf("view %q", out)
	}
	if _, err := os.Stat(filepath.Join(f.tree, "gamed_test.go")); err != nil {
		t.Fatal("the tree lost a file the view removed")
	}
	if _, err := os.Stat(filepath.Join(f.tree, "holdout")); err == nil {
		t.Fatal("a file placed in the view reached the tree")
	}
}

func TestCheckBoxBadOptions(t *testing.T) {
	dir := t.TempDir()
	for _, o := range []CheckBoxOptions{
		{Kind: Bwrap, Tree: "relative"},
		{Kind: "jail", Tree: dir},
		{Kind: Off, Tree: dir, Network: "some"},
		{Kind: Landlock, Tree: dir, Remove: []string{"x"}},
		{Kind: Bwrap, Tree: dir, Remove: []string{"../x"}},
	} {
		if _, err := NewCheckBox(o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	b, err := NewCheckBox(CheckBoxOptions{Kind: Off, Tree: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Command(context.Background(), "/", "true", nil); err == nil {
		t.Error("a folder outside the tree was accepted")
	}
	if len(b.Unconfined()) == 0 {
		t.Error("off says nothing about what it does not confine")
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func killPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// What a setup writes in the tree (rebuilt dependencies) is what the box's
// later checks see, never the real tree under bwrap; what it writes in HOME
// is gone; the holdout files placed in the view and the views are not
// visible to it.
func TestCheckBoxSetup(t *testing.T) {
	for _, kind := range confinedKinds {
		t.Run(kind, func(t *testing.T) {
			f := newBoxFixture(t)
			view := filepath.Join(f.priv, "engine", "holdout_view.txt")
			os.WriteFile(view, []byte("holdout view\n"), 0o644)
			o := CheckBoxOptions{Views: []string{view}}
			if kind == Bwrap {
				o.Put = []ViewFile{{From: f.secret, To: "holdout/h.txt", Mode: 0o644}}
			}
			b := f.box(t, kind, o)
			cmd, cleanup, err := b.SetupCommand(context.Background(), f.tree, "mkdir -p deps && echo rebuilt > deps/lib.txt; echo x > \"$HOME/x\"; cat holdout/h.txt "+shellQuote(view)+" 2>&1; echo setup-ran", f.env)
			if err != nil {
				t.Fatal(err)
			}
			setupOut, _ := cmd.CombinedOutput()
			cleanup()
			if !strings.Contains(string(setupOut), "setup-ran") || strings.Contains(string(setupOut), "TestSecret") || strings.Contains(string(setupOut), "holdout view") {
				t.Fatalf("setup output %q", setupOut)
			}
			checkOut, _ := runBox(t, b, f.tree, "cat deps/lib.txt", f.env)
			if !strings.Contains(checkOut, "rebuilt") {
				t.Fatalf("a check after the setup does not see what it rebuilt: %q", checkOut)
			}
			if _, err := os.Stat(filepath.Join(f.home, "x")); err == nil {
				t.Error("the setup's write to HOME survived it")
			}
			_, err = os.Stat(filepath.Join(f.tree, "deps", "lib.txt"))
			if kind == Bwrap && err == nil {
				t.Error("under bwrap the setup wrote the real tree")
			}
			if kind == Landlock && err != nil {
				t.Error("under Landlock the setup writes the tree (the caller's copy)")
			}
		})
	}
}

// A check cannot reach a unix socket in the host's /tmp (a terminal
// multiplexer's, an ssh agent's, an agent's network proxy): its /tmp is
// its own. Landlock cannot refuse it (CheckGaps says so).
func TestCheckBoxNoHostTmpSockets(t *testing.T) {
	sockDir := t.TempDir() // in the host's /tmp, outside the tree
	sock := filepath.Join(sockDir, "daemon.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{Bwrap, Off} {
		t.Run(kind, func(t *testing.T) {
			f := newBoxFixture(t)
			if !strings.HasPrefix(sock, "/tmp/") {
				t.Skipf("the temporary folder is %s, not in /tmp", os.TempDir())
			}
			b := f.box(t, kind, CheckBoxOptions{Network: CheckNetworkHost})
			if err := CopyFile(exe, filepath.Join(f.tree, "dialer"), 0o755); err != nil {
				t.Fatal(err)
			}
			out, code := runBox(t, b, f.tree, "./dialer", append(f.env, "CHECKBOX_TEST_DIAL="+sock))
			connected := code == 0 && strings.Contains(out, "connected")
			if connected != (kind == Off) {
				t.Fatalf("connected to %s: %v (exit %d, output %q)", sock, connected, code, out)
			}
		})
	}
}

// HOME's mask is the box's, laid under every check's own HOME layer: each
// check of a box finds HOME without what the view does not keep (the
// user's diary), with what it keeps (Go's settings), and nothing an
// earlier check of the box wrote there, a file in place of a hidden one
// included.
func TestCheckBoxHomeMaskEveryCheck(t *testing.T) {
	f := newBoxFixture(t)
	if err := os.WriteFile(filepath.Join(f.home, "diary.txt"), []byte("private\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := f.box(t, Bwrap, CheckBoxOptions{})
	for i := 0; i < 3; i++ {
		out, code := runBox(t, b, f.tree, `cat "$HOME/diary.txt" 2>&1; cat "$HOME/.config/go/env"; cat "$HOME/mine" 2>&1; echo planted > "$HOME/diary.txt"; echo x > "$HOME/mine"`, f.env)
		if code != 0 {
			t.Fatalf("check %d: exit %d: %s", i, code, out)
		}
		if strings.Contains(out, "private") || strings.Contains(out, "planted") || !strings.Contains(out, "GOFLAGS=-count=1") || strings.Contains(out, "\nx\n") {
			t.Fatalf("check %d saw HOME as %q", i, out)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(f.home, "diary.txt")); string(data) != "private\n" {
		t.Fatalf("HOME's file became %q", data)
	}
	if _, err := os.Stat(filepath.Join(f.home, "mine")); err == nil {
		t.Fatal("a check's file reached HOME")
	}
}
