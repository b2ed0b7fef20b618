//go:build !windows

package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain doubles as a fake engine (SANDBOX_TEST_ENGINE): it starts a
// wrapped command and waits forever, so a test can kill it as a crash would.
func TestMain(m *testing.M) {
	if spec := os.Getenv("SANDBOX_TEST_ENGINE"); spec != "" {
		os.Exit(fakeEngine(spec))
	}
	if v := os.Getenv("SANDBOX_TEST_HOLDER"); v != "" {
		// A process holding a secret in its environment, dumpable or not.
		if v == "undumpable" {
			if err := Undumpable(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
		fmt.Println(os.Getpid())
		select {}
	}
	os.Exit(m.Run())
}

func fakeEngine(spec string) int {
	var e struct {
		P      Policy
		Script string
	}
	if err := json.Unmarshal([]byte(spec), &e); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cmd, err := wrapped(e.P, e.Script, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(cmd.Process.Pid)
	select {}
}

// need resolves kind or skips the test naming why; in CI a missing bwrap
// fails, since .ci/run installs it.
func need(t testing.TB, kind string) {
	t.Helper()
	if _, err := Resolve(kind); err != nil {
		if kind == Bwrap && os.Getenv("CI") != "" {
			t.Fatalf("CI installs bubblewrap, but: %v", err)
		}
		t.Skipf("%s cannot run on this machine: %v", kind, err)
	}
}

// layout is a loop folder with protected files, a state root outside it, a
// HOME holding a second state root, and a token that marks every process a
// test starts.
type layout struct {
	root, dir, state, home, homeState, token string
}

func newLayout(t *testing.T) layout {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := layout{
		root:      root,
		dir:       filepath.Join(root, "loop"),
		state:     filepath.Join(root, "state"),
		home:      filepath.Join(root, "home"),
		homeState: filepath.Join(root, "home", ".local", "state", "looprinter"),
		token:     fmt.Sprintf("sbx-%d-%d", os.Getpid(), time.Now().UnixNano()),
	}
	files := map[string]string{
		filepath.Join(l.dir, "loop.yaml"):                      "version: 1\n",
		filepath.Join(l.dir, "spec", "protected.md"):           "keep me\n",
		filepath.Join(l.dir, "working-records", "state.json"):  "{}\n",
		filepath.Join(l.state, "engine", "state.json"):         "{}\n",
		filepath.Join(l.homeState, "registry.json"):            "{}\n",
		filepath.Join(l.home, ".claude.json"):                  "{}\n",
		filepath.Join(l.home, ".claude", "settings.json"):      "{}\n",
		filepath.Join(l.home, ".local", "share", "x", "a.txt"): "a\n",
	}
	for f, body := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func (l layout) policy(kind string) Policy {
	return Policy{
		Kind:     kind,
		Dir:      l.dir,
		Writable: []string{l.home, filepath.Join(l.root, "missing")},
		ReadOnly: []string{
			filepath.Join(l.dir, "loop.yaml"),
			filepath.Join(l.dir, "spec", "protected.md"),
			filepath.Join(l.dir, "working-records"),
			filepath.Join(l.dir, ".git"), // missing: skipped
			l.state,
			l.homeState,
		},
	}
}

// wrapped builds the command as the engine would: in its own process group.
func wrapped(p Policy, script string, env []string) (*exec.Cmd, error) {
	path, args, extra, err := p.Wrap("/bin/sh", []string{"-c", script})
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = p.Dir
	cmd.Env = append(append(os.Environ(), env...), extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, nil
}

func run(t *testing.T, p Policy, l layout, script string) string {
	t.Helper()
	cmd, err := wrapped(p, script, []string{"SBX_TOKEN=" + l.token, "ENGINE_PID=" + strconv.Itoa(os.Getpid())})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // a guard against a hang only
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("the sandboxed command did not return; output:\n%s", out.String())
	}
	return out.String()
}

// tokenProcs lists live processes that carry the layout's token.
func tokenProcs(token string) []int {
	want := []byte("SBX_TOKEN=" + token + "\x00")
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(env, 0), want) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && (st[i+2] == 'Z' || st[i+2] == 'X') {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}

// noneLeft waits for the token's processes to be gone, then checks that the
// late file never appears. Gone means no scan finds one three times in a
// row: a process in the middle of an exec has no environment to read for a
// moment (the kernel sets it last), so one empty scan can miss it.
func noneLeft(t *testing.T, l layout) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for empty := 0; empty < 3 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if len(tokenProcs(l.token)) > 0 {
			empty = 0
		} else {
			empty++
		}
	}
	if left := tokenProcs(l.token); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("processes started in the sandbox outlived it: %v", left)
	}
	time.Sleep(1200 * time.Millisecond) // the escapees would have fired by now
	for _, f := range []string{"late1", "late2", "late3"} {
		if _, err := os.Stat(filepath.Join(l.dir, f)); err == nil {
			t.Errorf("%s appeared: a process outlived the run", f)
		}
	}
}

// hostile is what a hostile agent tries. Each line of output names an
// attempt that succeeded; escapees write late1..3 after a second.
const hostile = `
try() { name=$1; shift; if ( "$@" ) 2>/dev/null; then echo "DID $name"; else echo "refused $name"; fi; }
try write-protected sh -c 'echo pwned > spec/protected.md'
try truncate-protected sh -c ': > spec/protected.md'
try rm-protected rm spec/protected.md
try mv-protected mv spec/protected.md spec/moved.md
try write-loopfile sh -c 'echo pwned >> loop.yaml'
try rm-loopfile rm loop.yaml
try write-records sh -c 'echo pwned > working-records/state.json'
try new-record sh -c 'echo pwned > working-records/forged.jsonl'
try rm-records rm -r working-records
try write-state sh -c "echo pwned > $STATE/engine/state.json"
try new-state sh -c "echo pwned > $STATE/engine/new"
try rm-state rm -r "$STATE/engine"
try write-homestate sh -c "echo pwned > $HOMESTATE/registry.json"
try new-homestate sh -c "echo pwned > $HOMESTATE/new"
try mv-homestate mv "$HOMESTATE" "$HOMESTATE.x"
try signal-engine kill -0 "$ENGINE_PID"
try write-disk sh -c 'for d in /dev/sd? /dev/vd? /dev/nvme?n?; do [ -b "$d" ] && exec 3>>"$d" && exit 0; done; exit 1'
echo ok > out.txt && echo "wrote out"
echo ok > "$TMPDIR/t" && cat "$TMPDIR/t" >/dev/null && echo "wrote tmp"
echo '{"a":1}' > "$HOME_/.claude/settings.json" && echo "wrote claude settings"
echo '{"a":1}' > "$HOME_/.claude.json" && echo "wrote claude json"
mkdir -p "$HOME_/.local/share/x/y" && echo b > "$HOME_/.local/share/x/y/b" && echo "wrote home share"
echo x > /dev/null && echo "wrote null"
setsid sh -c 'sleep 1; touch late1' >/dev/null 2>&1 &
( ( sleep 1; touch late2 ) >/dev/null 2>&1 & ) &
nohup sh -c 'trap "" HUP TERM; sleep 1; touch late3' >/dev/null 2>&1 &
echo done
`

func attack(t *testing.T, kind string) (Policy, layout, string) {
	need(t, kind)
	l := newLayout(t)
	t.Cleanup(func() { os.RemoveAll(TempDir(l.dir)) })
	p := l.policy(kind)
	script := fmt.Sprintf("STATE=%s; HOMESTATE=%s; HOME_=%s\n%s", l.state, l.homeState, l.home, hostile)
	out := run(t, p, l, script)
	t.Logf("%s:\n%s", kind, out)
	for _, want := range []string{"wrote out", "wrote tmp", "wrote claude settings", "wrote claude json", "wrote home share", "wrote null", "done"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("%s: the agent should be able to: %s", kind, want)
		}
	}
	attempts := []string{"write-state", "new-state", "rm-state", "write-homestate", "new-homestate", "mv-homestate", "write-disk"}
	if kind == Bwrap || landlockOnce.abi >= 6 { // Landlock scopes signals from ABI 6 on
		attempts = append(attempts, "signal-engine")
	}
	for _, a := range attempts {
		if strings.Contains(out, "DID "+a+"\n") {
			t.Errorf("%s: the agent could %s", kind, a)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(l.state, "engine", "state.json")); string(b) != "{}\n" {
		t.Errorf("%s: the state root was written: %q", kind, b)
	}
	if b, _ := os.ReadFile(filepath.Join(l.homeState, "registry.json")); string(b) != "{}\n" {
		t.Errorf("%s: the state root in HOME was written: %q", kind, b)
	}
	return p, l, out
}

func TestBwrapAttack(t *testing.T) {
	p, l, out := attack(t, Bwrap)
	for _, a := range []string{"write-protected", "truncate-protected", "rm-protected", "mv-protected", "write-loopfile", "rm-loopfile", "write-records", "new-record", "rm-records"} {
		if strings.Contains(out, "DID "+a+"\n") {
			t.Errorf("bwrap: the agent could %s", a)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(l.dir, "spec", "protected.md")); string(b) != "keep me\n" {
		t.Errorf("the protected file changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(l.dir, "loop.yaml")); string(b) != "version: 1\n" {
		t.Errorf("the loop file changed: %q", b)
	}
	if u := p.Unenforced(); len(u) != 0 {
		t.Errorf("bwrap enforces every read-only path, Unenforced says %v", u)
	}
	noneLeft(t, l)
}

func TestLandlockAttack(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	need(t, Landlock)
	// Landlock cannot keep paths inside the loop folder read-only: it says so.
	pre := newLayout(t)
	u := pre.policy(Landlock).Unenforced()
	for _, want := range []string{"loop.yaml", "spec/protected.md", "working-records"} {
		found := false
		for _, x := range u {
			found = found || x == filepath.Join(pre.dir, want)
		}
		if !found {
			t.Errorf("Unenforced %v does not list %s", u, want)
		}
	}
	for _, x := range u {
		if !Within(x, pre.dir) {
			t.Errorf("Unenforced lists %s, outside the loop folder: landlock enforces it", x)
		}
	}
	_, l, _ := attack(t, Landlock)
	killed := Sweep()
	if len(killed) == 0 {
		t.Errorf("Sweep killed nothing, but the agent left three processes behind")
	}
	noneLeft(t, l)
}

func TestOffIsUnconfined(t *testing.T) {
	l := newLayout(t)
	p := l.policy(Off)
	path, args, extra, err := p.Wrap("/bin/sh", []string{"-c", "x"})
	if err != nil || path != "/bin/sh" || len(args) != 2 || extra != nil {
		t.Fatalf("off changed the command: %s %v %v %v", path, args, extra, err)
	}
	if len(p.Unenforced()) != 5 {
		t.Errorf("off enforces nothing; Unenforced = %v", p.Unenforced())
	}
}

// The sandbox dies with bubblewrap when bubblewrap is killed, and with the
// engine when the engine is killed (a crash).
func TestBwrapKilled(t *testing.T) {
	need(t, Bwrap)
	l := newLayout(t)
	p := l.policy(Bwrap)
	cmd, err := wrapped(p, "setsid sh -c 'sleep 1; touch late1' & ( ( sleep 1; touch late2 ) & ) ; touch ready; sleep 30", []string{"SBX_TOKEN=" + l.token})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(l.dir, "ready"))
	cmd.Process.Kill()
	cmd.Wait()
	noneLeft(t, l)
}

func TestBwrapEngineCrash(t *testing.T) {
	need(t, Bwrap)
	l := newLayout(t)
	spec, _ := json.Marshal(map[string]any{"P": l.policy(Bwrap), "Script": "setsid sh -c 'sleep 1; touch late1' & touch ready; sleep 30"})
	engine := exec.Command(os.Args[0], "-test.run=^$")
	engine.Env = append(os.Environ(), "SANDBOX_TEST_ENGINE="+string(spec), "SBX_TOKEN="+l.token)
	engine.Stderr = os.Stderr
	if err := engine.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(l.dir, "ready"))
	engine.Process.Kill()
	engine.Wait()
	noneLeft(t, l)
}

func waitFile(t *testing.T, f string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a guard against a hang only
	for time.Now().Before(deadline) {
		if _, err := os.Stat(f); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", f)
}

func TestLandlockHelperErrors(t *testing.T) {
	need(t, Landlock)
	l := newLayout(t)
	p := l.policy(Landlock)
	path, args, extra, err := p.Wrap(filepath.Join(l.dir, "no-such-program"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), extra...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 127 || !strings.Contains(string(out), "looprinter sandbox: cannot run") {
		t.Errorf("a missing program: %v %s", err, out)
	}
	cmd = exec.Command(path, args...)
	cmd.Env = append(os.Environ(), EnvExec+"={not json")
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 126 || !strings.Contains(string(out), "bad "+EnvExec) {
		t.Errorf("a broken marker: %v %s", err, out)
	}
	// The marker does not reach the command.
	path, args, extra, err = p.Wrap("sh", []string{"-c", "echo \"[$" + EnvExec + "]\""})
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(path, args...)
	cmd.Env = append(os.Environ(), extra...)
	out, err = cmd.CombinedOutput()
	if err != nil || string(out) != "[]\n" {
		t.Errorf("the marker leaked into the command: %q %v", out, err)
	}
}

func TestWrapErrors(t *testing.T) {
	for _, p := range []Policy{
		{Kind: "chroot", Dir: "/"},
		{Kind: Bwrap, Dir: "relative"},
		{Kind: Landlock, Dir: "/no/such/dir"},
	} {
		if _, _, _, err := p.Wrap("/bin/true", nil); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
	if _, _, _, err := (Policy{Kind: Landlock, Dir: t.TempDir()}).Wrap("no-such-program-anywhere", nil); err == nil {
		t.Errorf("a program not in PATH: no error")
	}
}

func TestResolve(t *testing.T) {
	if k, err := Resolve(Off); k != Off || err != nil {
		t.Errorf("off: %s %v", k, err)
	}
	if _, err := Resolve("chroot"); err == nil || !strings.Contains(err.Error(), `"chroot" is not known`) {
		t.Errorf("unknown mode: %v", err)
	}
	k, err := Resolve(Auto)
	_, berr := Resolve(Bwrap)
	_, lerr := Resolve(Landlock)
	switch {
	case berr == nil && k != Bwrap:
		t.Errorf("auto with bwrap working = %s", k)
	case berr != nil && lerr == nil && k != Landlock:
		t.Errorf("auto with only landlock working = %s", k)
	case berr != nil && lerr != nil && (err == nil || !strings.Contains(err.Error(), "apt-get install bubblewrap") || !strings.Contains(err.Error(), "sandbox: off")):
		t.Errorf("auto with nothing working: %v", err)
	}
	if berr != nil && !strings.Contains(berr.Error(), "apt-get install bubblewrap") {
		t.Errorf("bwrap error does not say what to install: %v", berr)
	}
	lines := Describe(Auto)
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "bwrap: ") || !strings.HasPrefix(lines[1], "landlock: ") || !strings.HasPrefix(lines[2], "off: ") {
		t.Fatalf("Describe: %q", lines)
	}
	inForce := 0
	for _, line := range lines {
		if strings.Contains(line, "in force") {
			inForce++
			if err == nil && !strings.HasPrefix(line, k+": ") {
				t.Errorf("Describe says %q, Resolve says %s", line, k)
			}
		}
	}
	if (err == nil) != (inForce == 1) {
		t.Errorf("Describe(auto) = %q with Resolve error %v", lines, err)
	}
	if l := Describe(Off); !strings.Contains(l[2], "in force") {
		t.Errorf("Describe(off) = %q", l)
	}
	t.Logf("%s", strings.Join(lines, "\n"))
}

// A read-only path in a writable tree outside the loop folder splits the
// tree: its siblings stay writable, the path and its own folder do not.
func TestGrantSplit(t *testing.T) {
	l := newLayout(t)
	var dirs, files []string
	grant(l.home, []string{l.homeState}, &dirs, &files)
	has := func(list []string, p string) bool {
		for _, x := range list {
			if x == p {
				return true
			}
		}
		return false
	}
	if !has(dirs, filepath.Join(l.home, ".claude")) || !has(files, filepath.Join(l.home, ".claude.json")) || !has(dirs, filepath.Join(l.home, ".local", "share")) {
		t.Errorf("siblings not granted: dirs %v files %v", dirs, files)
	}
	for _, x := range append(dirs, files...) {
		if Within(l.homeState, x) || Within(x, l.homeState) {
			t.Errorf("granted %s, which holds or is in the read-only %s", x, l.homeState)
		}
	}
	dirs, files = nil, nil
	grant(l.homeState, []string{l.home}, &dirs, &files)
	if len(dirs)+len(files) != 0 {
		t.Errorf("a tree inside a read-only path was granted: %v %v", dirs, files)
	}
}

// A program in the host's /tmp (go run and go test build there, npm installs
// there in a clone under /tmp) and the PATH folders there stay visible under
// bwrap, read-only; the agent's TMPDIR is its own and writable.
func TestBwrapProgramInTmp(t *testing.T) {
	need(t, Bwrap)
	l := newLayout(t)
	for _, f := range []string{"bin/prog", "path/helper"} {
		os.MkdirAll(filepath.Join(l.root, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(l.root, f), []byte("#!/bin/sh\necho ran "+filepath.Base(f)+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if !Within(l.root, "/tmp") {
		t.Skipf("the test's folder %s is not in /tmp", l.root)
	}
	t.Setenv("PATH", filepath.Join(l.root, "path")+":"+os.Getenv("PATH"))
	p := l.policy(Bwrap)
	path, args, extra, err := p.Wrap(filepath.Join(l.root, "bin", "prog"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), extra...)
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != "ran prog\n" {
		t.Errorf("a program in /tmp: %v %s", err, out)
	}
	if out := run(t, p, l, "helper; echo x > $TMPDIR/y && cat $TMPDIR/y; echo x > "+filepath.Join(l.root, "path", "helper")+" || echo refused"); !strings.HasPrefix(out, "ran helper\nx\n") || !strings.HasSuffix(out, "refused\n") {
		t.Errorf("a PATH folder in /tmp: %q", out)
	}
}

// As root (containers and CI runners run agents so) bubblewrap alone keeps
// every capability: the agent could remount / writable and rewrite a check
// program outside the loop folder. Under the sandbox it has none: CapEff is
// 0, the remount is refused, and the program outside stays as it was. The
// same holds for an ordinary user.
func TestBwrapDropsEveryCapability(t *testing.T) { dropsEveryCapability(t, Bwrap) }

// Under Landlock too: as root, a confined agent keeps no capability (the
// bounding set too is empty, so a program it executes gets none back).
func TestLandlockDropsEveryCapability(t *testing.T) { dropsEveryCapability(t, Landlock) }

func dropsEveryCapability(t *testing.T, kind string) {
	need(t, kind)
	l := newLayout(t)
	check := filepath.Join(l.root, "checks", "check.sh")
	if err := os.MkdirAll(filepath.Dir(check), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(check, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := `grep '^CapEff' /proc/self/status
grep '^CapBnd' /proc/self/status
if mount -o remount,rw,bind / 2>/dev/null; then echo "DID remount"; fi
if umount -l /proc 2>/dev/null; then echo "DID umount-proc"; fi
if printf '#!/bin/sh\nexit 0\n' > "$CHECK" 2>/dev/null; then echo "DID rewrite-check"; fi
echo done`
	cmd, err := wrapped(l.policy(kind), script, []string{"CHECK=" + check})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "done") {
		t.Fatalf("the script did not run to its end: %s", s)
	}
	wants := []string{"CapEff:\t0000000000000000", "CapBnd:\t0000000000000000"}
	if kind == Landlock && os.Getuid() != 0 {
		// An ordinary user cannot empty its bounding set (that takes
		// CAP_SETPCAP), and needs not: with no_new_privs no program it
		// executes gains a capability from it.
		wants = wants[:1]
	}
	for _, want := range wants {
		if !strings.Contains(s, want) {
			t.Errorf("%s, as uid %d: the agent keeps capabilities (want %q): %s", kind, os.Getuid(), want, s)
		}
	}
	for _, a := range []string{"remount", "umount-proc", "rewrite-check"} {
		if strings.Contains(s, "DID "+a+"\n") {
			t.Errorf("%s, as uid %d: the agent could %s", kind, os.Getuid(), a)
		}
	}
	if b, _ := os.ReadFile(check); string(b) != "#!/bin/sh\nexit 1\n" {
		t.Errorf("the check outside the loop folder was rewritten: %q", b)
	}
}

// An engine is not dumpable: another process of the same user cannot read
// its environment (the API keys in it) from /proc, while a dumpable one's
// can be read. Both sides run as an ordinary user (as nobody, when the test
// runs as root: root could read anything).
func TestUndumpableHidesEnvironment(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "looprinter-holder-") // t.TempDir's parent is 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "holder")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	var cred *syscall.Credential
	if os.Getuid() == 0 {
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	start := func(mode string) int {
		cmd := exec.Command(bin)
		cmd.Env = []string{"SANDBOX_TEST_HOLDER=" + mode, "SECRET_KEY=sk-hidden-1234"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		var pid int
		if _, err := fmt.Fscan(out, &pid); err != nil {
			t.Fatalf("%s holder: %v", mode, err)
		}
		return pid
	}
	read := func(pid int) (string, error) {
		cmd := exec.Command("/bin/cat", fmt.Sprintf("/proc/%d/environ", pid))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		b, err := cmd.Output()
		return string(b), err
	}
	if env, err := read(start("dumpable")); err != nil || !strings.Contains(env, "sk-hidden-1234") {
		t.Fatalf("a dumpable process's environment should be readable by its user (the test proves nothing otherwise): %q %v", env, err)
	}
	if env, err := read(start("undumpable")); err == nil || strings.Contains(env, "sk-hidden-1234") {
		t.Errorf("an undumpable process's environment was read: %q", env)
	}
}
