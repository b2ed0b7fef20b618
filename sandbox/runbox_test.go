//go:build linux

package sandbox

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// boxedRun runs script through the loop's run box as agent.Run does: the
// path Wrap returns names the BoxedRun, whose Start runs it in the box.
// It returns the output (stdout and stderr), the exit code and the signal
// that ended it.
func boxedRun(t *testing.T, p Policy, script string, env []string) (string, int, syscall.Signal) {
	t.Helper()
	p.Box = true
	path, _, extra, err := p.Wrap("/bin/sh", []string{"-c", script})
	if err != nil {
		t.Fatal(err)
	}
	b := TakeBoxedRun(path)
	if b == nil {
		t.Fatalf("Wrap did not offer the run to a box: %s", path)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("/nonexistent-classic")
	cmd.Dir = p.Dir
	cmd.Env = append(append(os.Environ(), env...), extra...)
	cmd.Stdout, cmd.Stderr = w, w
	bp, err := b.Start(cmd, -1)
	w.Close()
	if err != nil {
		t.Fatalf("the box did not start the run: %v", err)
	}
	out, _ := io.ReadAll(r)
	code, sig, err := bp.Wait()
	if err != nil {
		t.Fatalf("the run: %v: %s", err, out)
	}
	return string(out), code, sig
}

// boxLayout is a layout with a layer over the loop folder and HOME's
// layer built (as the engine lays them for an agent run).
func boxLayout(t *testing.T) (layout, Policy, Layer) {
	t.Helper()
	need(t, Bwrap)
	if err := LayerProbe(); err != nil {
		t.Skipf("no copy-on-write layer here: %v", err)
	}
	t.Cleanup(CloseRunBoxes)
	l := newLayout(t)
	lay := Layer{Target: l.dir, Upper: filepath.Join(l.state, "layers", "loop", "upper"), Work: filepath.Join(l.state, "layers", "loop", "work")}
	home := Layer{Target: l.home, Upper: filepath.Join(l.state, "layers", "home", "upper"), Work: filepath.Join(l.state, "layers", "home", "work")}
	for _, x := range []Layer{lay, home} {
		if _, err := PrepareLayer(x); err != nil {
			t.Fatal(err)
		}
	}
	p := l.policy(Bwrap)
	p.Layers = []Layer{lay, home}
	p.HomeMask = true
	p.View = ViewSpec{Env: []string{"HOME=" + l.home, "PATH=/usr/bin:/bin"}}
	p.ReadOnly = nil
	t.Cleanup(func() { os.RemoveAll(TempDir(l.dir)) })
	return l, p, lay
}

func boxCount() int {
	boxes.Lock()
	defer boxes.Unlock()
	return len(boxes.all)
}

// An agent run in the loop's box is confined as one in bubblewrap of its
// own: the same user with no capability (none to get back by exec), no
// new privileges, a /proc of its own PID namespace (itself its first
// process), the kernel's settings read-only, / read-only, only the
// loopback, and what it writes in the loop folder lands in the layer.
// Two runs share one box, and nothing of the first but the layer and the
// host's writable folders reaches the second: not its /tmp, not a process.
func TestRunBoxConfines(t *testing.T) {
	l, p, lay := boxLayout(t)
	p.Net = &Network{} // the network confined: the loopback only
	script := `
echo "uid=$(id -u)"
grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status
echo "pid=$$"
echo "procs=$(ls /proc | grep -c '^[0-9]')"
[ -w /proc/sys/kernel/hostname ] && echo "WROTE-SYSCTL"
[ -w /proc/sysrq-trigger ] && echo "WROTE-SYSRQ"
if mkdir /escape 2>/dev/null; then echo "WROTE-ROOT"; fi
if mount -t tmpfs x /tmp 2>/dev/null; then echo "MOUNTED"; fi
echo "ifaces=$(ls /sys/class/net 2>/dev/null | tr '\n' ' ')"
echo "net=$(cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
[ -e /tmp/left-by-first ] && echo "SAW-FIRST-TMP"
echo left > /tmp/left-by-first
[ -e /dev/shm/left-by-first ] && echo "SAW-FIRST-SHM"
echo left > /dev/shm/left-by-first
touch /dev/x 2>/dev/null && echo "WROTE-DEV"
ls -A /.looprinter-layers 2>/dev/null | grep -q . && echo "SAW-BOX-FOLDERS"
touch /.looprinter-layers/x 2>/dev/null && echo "WROTE-BOX-FOLDERS"
echo new > new.txt
(sleep 300 &) ; echo daemon
echo done`
	if boxCount() != 0 {
		t.Fatalf("%d boxes before the first run", boxCount())
	}
	var outs []string
	started := boxStarts.Load()
	for i := 0; i < 2; i++ {
		// What the engine does between runs (a file applied to the loop
		// folder, one left in the private temporary folder) changes
		// folders the box binds, not the folders: the same box.
		os.WriteFile(filepath.Join(l.dir, "applied-"+strconv.Itoa(i)), nil, 0o644)
		os.WriteFile(filepath.Join(TempDirOf(p.Dir, p.Slot), "left"), nil, 0o644)
		out, code, sig := boxedRun(t, p, script, []string{"SBX_TOKEN=" + l.token})
		if code != 0 || sig != 0 || !strings.Contains(out, "done") {
			t.Fatalf("run %d: exit %d, signal %v: %s", i+1, code, sig, out)
		}
		outs = append(outs, out)
		if n, s := boxCount(), boxStarts.Load()-started; n != 1 || s != 1 {
			t.Fatalf("after run %d: %d boxes, %d started, want 1 (one box for the loop's runs)", i+1, n, s)
		}
	}
	for i, out := range outs {
		for _, want := range []string{"uid=" + strconv.Itoa(os.Getuid()), "CapEff:\t0000000000000000", "CapPrm:\t0000000000000000",
			"CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "pid=1", "\nnet=lo \n"} {
			if !strings.Contains(out, want) {
				t.Errorf("run %d: no %q in:\n%s", i+1, want, out)
			}
		}
		for _, bad := range []string{"WROTE-SYSCTL", "WROTE-SYSRQ", "WROTE-ROOT", "MOUNTED", "SAW-FIRST-TMP", "SAW-FIRST-SHM", "WROTE-DEV", "SAW-BOX-FOLDERS", "WROTE-BOX-FOLDERS"} {
			if strings.Contains(out, bad) {
				t.Errorf("run %d: %s:\n%s", i+1, bad, out)
			}
		}
		// Its shell, the sleep, and the listing's ls and grep at most.
		if !strings.Contains(out, "procs=") || strings.Contains(out, "procs=0") {
			t.Errorf("run %d: no processes of its own in its /proc:\n%s", i+1, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if n, ok := strings.CutPrefix(line, "procs="); ok {
				if v, _ := strconv.Atoi(n); v > 4 {
					t.Errorf("run %d: %d processes in its /proc, more than its own:\n%s", i+1, v, out)
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(l.dir, "new.txt")); err == nil {
		t.Error("the run wrote the loop folder itself, not its layer")
	}
	if b, err := os.ReadFile(filepath.Join(lay.Upper, "new.txt")); err != nil || string(b) != "new\n" {
		t.Errorf("the run's write is not in its layer: %q %v", b, err)
	}
	if _, err := os.Stat("/escape"); err == nil {
		os.Remove("/escape")
		t.Error("a run made a folder in the host's /")
	}
	// The daemons the runs left ended with their PID namespaces.
	if pids := tokenProcs(l.token); len(pids) > 0 {
		t.Errorf("processes the runs left are still running: %v", pids)
	}
}

// The box's view is the run's: HOME built (a file of the real HOME the
// manifest does not keep is not there), the engine's state hidden.
func TestRunBoxView(t *testing.T) {
	l, p, _ := boxLayout(t)
	os.WriteFile(filepath.Join(l.home, "secret.txt"), []byte("s\n"), 0o600)
	p.Hidden = []string{l.state}
	out, code, _ := boxedRun(t, p, `
[ -e "$HOME/secret.txt" ] && echo "SAW-SECRET"
ls "`+l.state+`" 2>/dev/null | grep -q . && echo "SAW-STATE"
touch "`+l.state+`/x" 2>/dev/null && echo "WROTE-STATE"
[ -e "$HOME/.claude/settings.json" ] && echo kept
echo done`, nil)
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, bad := range []string{"SAW-SECRET", "SAW-STATE", "WROTE-STATE"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s:\n%s", bad, out)
		}
	}
}

// The engine ends a run by its process group: a SIGTERM ends an agent
// without a handler for it at once (the first process of a PID namespace
// would not get it), one with a handler gets it.
func TestRunBoxSignal(t *testing.T) {
	_, p, _ := boxLayout(t)
	for _, c := range []struct {
		name, script string
		want         syscall.Signal
	}{
		{"no handler", "echo up; exec sleep 300", syscall.SIGKILL},
		{"handler", "trap 'echo got; exit 7' TERM; echo up; while :; do sleep 0.05; done", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p.Box = true
			path, _, extra, err := p.Wrap("/bin/sh", []string{"-c", c.script})
			if err != nil {
				t.Fatal(err)
			}
			b := TakeBoxedRun(path)
			r, w, _ := os.Pipe()
			defer r.Close()
			cmd := exec.Command("/nonexistent-classic")
			cmd.Dir = p.Dir
			cmd.Env = append(os.Environ(), extra...)
			cmd.Stdout, cmd.Stderr = w, w
			bp, err := b.Start(cmd, -1)
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 3)
			io.ReadFull(r, buf)
			start := time.Now()
			bp.Signal(syscall.SIGTERM)
			rest, _ := io.ReadAll(r)
			code, sig, _ := bp.Wait()
			if time.Since(start) > 3*time.Second {
				t.Errorf("the run took %v to end after SIGTERM", time.Since(start))
			}
			if sig != c.want || (c.want == 0 && (code != 7 || !strings.Contains(string(rest), "got"))) {
				t.Errorf("exit %d, signal %v, output %q; want signal %v", code, sig, rest, c.want)
			}
		})
	}
}

// Off, the run starts the classic way (Wrap gives a command to execute).
func TestRunBoxOff(t *testing.T) {
	_, p, _ := boxLayout(t)
	t.Setenv(EnvRunBox, "off")
	p.Box = true
	path, _, _, err := p.Wrap("/bin/true", nil)
	if err != nil {
		t.Fatal(err)
	}
	if TakeBoxedRun(path) != nil || strings.HasPrefix(path, boxedPrefix) {
		t.Fatalf("%s=off, and Wrap offered the run to a box", EnvRunBox)
	}
}

// BenchmarkRunBox starts /bin/true as the engine starts an agent under
// the default sandbox (layers over the loop folder and a built HOME, the
// network's relay): through the loop's run box, or the classic way (the
// helper and bubblewrap started for the run). The box's processes are
// not the benchmark's children until it closes: measure the CPU of the
// whole tree from outside (perf stat), e.g.
//
//	go test -c -o /tmp/sb.test ./sandbox
//	perf stat -e task-clock /tmp/sb.test -test.run '^$' -test.bench 'RunBox/box' -test.benchtime 200x
func BenchmarkRunBox(b *testing.B) {
	for _, mode := range []string{"box", "classic"} {
		b.Run(mode, func(b *testing.B) {
			need(b, Bwrap)
			if err := LayerProbe(); err != nil {
				b.Skip(err)
			}
			defer CloseRunBoxes()
			root, _ := filepath.EvalSymlinks(b.TempDir())
			dir, home, state := filepath.Join(root, "loop"), filepath.Join(root, "home"), filepath.Join(root, "state")
			for _, d := range []string{dir, filepath.Join(home, ".claude"), state} {
				os.MkdirAll(d, 0o755)
			}
			defer os.RemoveAll(TempDir(dir))
			defer removeAllWritable(state)
			sock := filepath.Join(state, "proxy.sock")
			ln, err := net.Listen("unix", sock)
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			lay := func(name, target string) Layer {
				l := Layer{Target: target, Upper: filepath.Join(state, "layers", name, "upper"), Work: filepath.Join(state, "layers", name, "work")}
				if _, err := PrepareLayer(l); err != nil {
					b.Fatal(err)
				}
				return l
			}
			p := Policy{Kind: Bwrap, Dir: dir, Writable: []string{home}, Layers: []Layer{lay("loop", dir), lay("home", home)},
				HomeMask: true, Net: &Network{Socket: sock, Port: 3128}, Box: mode == "box",
				View: ViewSpec{Env: []string{"HOME=" + home, "PATH=/usr/bin:/bin"}}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				path, args, extra, err := p.Wrap("/bin/true", nil)
				if err != nil {
					b.Fatal(err)
				}
				cmd := exec.Command("/bin/true")
				cmd.Dir = dir
				cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + home}, extra...)
				null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
				cmd.Stdout, cmd.Stderr = null, null
				if bx := TakeBoxedRun(path); bx != nil {
					bp, err := bx.Start(cmd, -1)
					if err != nil {
						b.Fatal(err)
					}
					if code, _, err := bp.Wait(); err != nil || code != 0 {
						b.Fatalf("exit %d: %v", code, err)
					}
				} else {
					cmd = exec.Command(path, args...)
					cmd.Dir = dir
					cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + home}, extra...)
					cmd.Stdout, cmd.Stderr = null, null
					cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
					if err := cmd.Run(); err != nil {
						b.Fatal(err)
					}
				}
				null.Close()
			}
		})
	}
}

// A run the box cannot start (here: its program is not in the view) is
// left to the classic start, which fails in its own words: nothing of the
// agent ran in the box.
func TestRunBoxLeavesWhatItCannotStart(t *testing.T) {
	_, p, _ := boxLayout(t)
	p.Box = true
	path, _, extra, err := p.Wrap("/nonexistent/agent", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := TakeBoxedRun(path)
	if b == nil {
		t.Fatal("Wrap did not offer the run to a box")
	}
	cmd := exec.Command("/nonexistent-classic")
	cmd.Dir = p.Dir
	cmd.Env = append(os.Environ(), extra...)
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	cmd.Stdout, cmd.Stderr = null, null
	if _, err := b.Start(cmd, -1); !errors.Is(err, ErrBoxOff) {
		t.Fatalf("Start: %v, want ErrBoxOff", err)
	}
	if classic, env := b.Classic(); classic == "" || len(env) == 0 || !strings.HasPrefix(env[0], EnvLayers+"=") {
		t.Errorf("no classic start to fall back to: %q %q", classic, env)
	}
}

// The loop's network decides the runs' in the box as in a run's own
// bubblewrap: open (no Net), the host's interfaces; confined (a Net), the
// loopback only.
func TestRunBoxNetwork(t *testing.T) {
	_, p, _ := boxLayout(t)
	host, err := os.ReadFile("/proc/net/dev")
	if err != nil || strings.Count(string(host), ":") < 2 {
		t.Skip("the host has one network interface or none")
	}
	script := `echo "net=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\n' ' ')"`
	want := func(out string) string {
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "net="); ok {
				return v
			}
		}
		return ""
	}
	var names []string
	for _, line := range strings.Split(string(host), "\n")[2:] {
		if n, _, ok := strings.Cut(line, ":"); ok {
			names = append(names, strings.TrimSpace(n))
		}
	}
	sort.Strings(names)
	out, code, _ := boxedRun(t, p, script, nil)
	if got := want(out); code != 0 || got != strings.Join(names, " ")+" " {
		t.Errorf("network open: the run's interfaces are %q, want the host's %q", got, strings.Join(names, " ")+" ")
	}
	p.Net = &Network{}
	out, code, _ = boxedRun(t, p, script, nil)
	if got := want(out); code != 0 || got != "lo " {
		t.Errorf("network confined: the run's interfaces are %q, want the loopback's only", got)
	}
}
