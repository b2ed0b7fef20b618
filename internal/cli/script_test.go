package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/testenv"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/proc"
	"github.com/looprinter/looprinter/sandbox"
)

// TestMain lets the test binary stand in for looprinter in script tests,
// and keeps the package's tests off the user's own state (internal/testenv).
func TestMain(m *testing.M) {
	testscript.Main(stateDirM{m}, map[string]func(){
		"looprinter": func() { os.Exit(Main(os.Args[1:])) },
	})
}

// stateDirM runs the tests (never the looprinter command itself, which
// keeps the state folder its script gave it) in a temporary state folder.
type stateDirM struct{ m *testing.M }

func (s stateDirM) Run() int { return testenv.Main(s.m) }

// TestScript runs every testdata/script/*.txtar against the real binary.
func TestScript(t *testing.T) {
	testscript.Run(t, ScriptParams())
}

// ScriptParams are shared by every script test.
func ScriptParams() testscript.Params {
	return testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		RequireExplicitExec: true,
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "ci":
				return os.Getenv("CI") != "", nil
			case "cgroup":
				return sandbox.CgroupProbe() == nil, nil
			case "tmpfs":
				return canMountTmpfs(), nil
			case "layers": // bubblewrap with copy-on-write layers: runs at once
				return sandbox.LayerProbe() == nil, nil
			case "root":
				return os.Geteuid() == 0, nil
			case "cargo": // Rust's cargo: on PATH or in ~/.cargo/bin (withcargo.sh finds it)
				return cargoFound(), nil
			case "pyyaml": // python3 imports a distribution installed outside the project (PyYAML)
				return exec.Command("python3", "-c", "import yaml").Run() == nil, nil
			case "pyenv2": // python3 is pyenv's shim, and another 3.10+ version is installed ($PYENV_OTHER)
				return otherPyenvVersion() != "", nil
			case "landlockunix": // Landlock mediates unix sockets by path (ABI 9)
				return sandbox.LandlockUnixByPath(), nil
			case "jsrunners": // the pinned jest, ts-jest, vitest, mocha (scripts/install-js-runners.sh)
				return jsRunnersCond()
			case "landlocknet": // Landlock with network rules (ABI 4)
				_, ok := sandbox.NetworkEnforced(sandbox.Landlock)
				return ok, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("LOOPRINTER_TEST", "1")
			env.Setenv("PYENV_OTHER", otherPyenvVersion())
			// Each script has its own registry, logs and engine folders,
			// never the user's ~/.local/state/looprinter: beside $WORK (so
			// no loop in $WORK sees it as its own files), removed with it,
			// laid out as under an XDG_STATE_HOME ($WORK.xdg/state/looprinter).
			env.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(env.WorkDir+".xdg", "state", "looprinter"))
			keepRecordsOnFailure(env)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfile":   cmdWaitFile,
			"pausefile":  cmdPauseFile,
			"killpid":    cmdKillPID,
			"pidgone":    cmdPIDGone,
			"jsonlcount": cmdJSONLCount,
			"tornline":   cmdTornLine,
			"recgrep":    cmdRecGrep,
			"lp":         cmdLP,
			"recwait":    cmdRecWait,
			"webhook":    cmdWebhook,
			"nosecrets":  cmdNoSecrets,
			"procs":      cmdProcs,
			"overlap":    cmdOverlap,
			"buildruns":  cmdBuildRuns,
			"fakegithub": cmdFakeGitHub,
			"jsrunners":  cmdJSRunners,
		},
	}
}

// waitDefault is how long waitfile, recwait and pausefile wait when no
// timeout is given: a deadline for a failing test only, long enough that a
// loaded machine never reaches it on a passing one (a wait ends as soon as
// its condition holds).
const waitDefault = 5 * time.Minute

// goneGuard is how long `! procs` and pidgone wait for killed processes to
// be gone (reaped, on a loaded machine, late): a process that was missed
// lives on (the scripts' grandchildren and escapees sleep 60s or loop
// forever), so the guard stays well below what they sleep.
const goneGuard = 20 * time.Second

// canMountTmpfs says whether a script can mount a small tmpfs of its own
// (`unshare -m sh -c 'mount -t tmpfs …'`: root, or the capability, and
// unshare): how the tests fill a disk without filling the machine's.
var canMountTmpfs = sync.OnceValue(func() bool {
	dir, err := os.MkdirTemp("", "looprinter-tmpfs-probe-")
	if err != nil {
		return false
	}
	defer os.Remove(dir)
	return exec.Command("unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs "+dir).Run() == nil
})

// waitfile PATH [TIMEOUT]: wait until PATH exists.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: waitfile path [timeout]")
	}
	timeout := waitDefault
	if len(args) > 1 {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		timeout = d
	}
	deadline := time.Now().Add(timeout)
	path := ts.MkAbs(args[0])
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(path); err == nil && len(data) > 0 {
			return
		}
		if inLayer(ts, path) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("%s did not appear within %s", args[0], timeout)
}

// pausefile [wait]: the loop in the current folder has a pause asked for
// (its pause file, in the engine's private folder, exists); with wait,
// wait up to waitDefault for it.
func cmdPauseFile(ts *testscript.TestScript, neg bool, args []string) {
	p := loopdir.PrivateUnder(ts.Getenv("LOOPRINTER_STATE_DIR"), ts.MkAbs(".")).Pause()
	deadline := time.Now()
	if len(args) > 0 && args[0] == "wait" {
		deadline = deadline.Add(waitDefault)
	}
	for {
		_, err := os.Stat(p)
		if (err == nil) != neg {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if neg {
		ts.Fatalf("the loop has a pause file")
	}
	ts.Fatalf("the loop has no pause file")
}

// inLayer says whether an agent running now has written path in the
// copy-on-write layer over its loop folder (a folder above path), where
// its writes stay until its run ends.
func inLayer(ts *testscript.TestScript, path string) bool {
	data, err := fromLayer(ts, path)
	return err == nil && len(data) > 0
}

// fromLayer reads path as an agent running now wrote it in its layer.
func fromLayer(ts *testscript.TestScript, path string) ([]byte, error) {
	root := ts.Getenv("LOOPRINTER_STATE_DIR")
	for d := filepath.Dir(path); d != filepath.Dir(d); d = filepath.Dir(d) {
		rel, err := filepath.Rel(d, path)
		if err != nil {
			break
		}
		up := filepath.Join(loopdir.PrivateUnder(root, d).LayerUpper("loop"), rel)
		if data, err := os.ReadFile(up); err == nil {
			return data, nil
		}
	}
	return nil, os.ErrNotExist
}

// readAgentFile reads a file an agent wrote: in the folder, or, while its
// run goes on, in its layer.
func readAgentFile(ts *testscript.TestScript, path string) ([]byte, error) {
	path = ts.MkAbs(path)
	if data, err := os.ReadFile(path); err == nil {
		return data, nil
	}
	return fromLayer(ts, path)
}

// killpid SIGNAL PIDFILE: send a signal to the pid written in a file.
func cmdKillPID(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: killpid INT|TERM|KILL pidfile")
	}
	pid := readPID(ts, args[1])
	sig := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL}[args[0]]
	ts.Check(proc.Kill(pid, sig))
}

// procs MARK: some live process has MARK in its command line or works in
// a folder whose path starts with it (a daemon an agent started, named by
// an argument only it carries, such as its loop folder's path: seen the
// same from the host whatever namespace it is in). ! procs MARK: none has, within 5 seconds (a process being killed
// takes a moment to go).
func cmdProcs(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: procs MARK")
	}
	mark := []byte(args[0])
	live := func() []string {
		var out []string
		ents, _ := os.ReadDir("/proc")
		for _, d := range ents {
			pid, err := strconv.Atoi(d.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
			if err != nil {
				continue
			}
			if cwd, _ := os.Readlink(filepath.Join("/proc", d.Name(), "cwd")); !bytes.Contains(cmdline, mark) && !strings.HasPrefix(cwd, string(mark)) {
				continue
			}
			stat, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				continue // a zombie has ended
			}
			out = append(out, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		}
		return out
	}
	if !neg {
		if len(live()) == 0 {
			ts.Fatalf("no live process carries %q", mark)
		}
		return
	}
	deadline := time.Now().Add(goneGuard)
	for {
		left := live()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("processes still alive:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pidgone PIDFILE: the process whose pid is in the file no longer exists.
func cmdPIDGone(ts *testscript.TestScript, neg bool, args []string) {
	pid := readPID(ts, args[0])
	deadline := time.Now().Add(goneGuard)
	for time.Now().Before(deadline) {
		if !ops.Alive(pid) {
			if neg {
				ts.Fatalf("process %d is gone", pid)
			}
			return
		}
		if neg {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	ts.Fatalf("process %d is still running", pid)
}

func readPID(ts *testscript.TestScript, file string) int {
	data, err := readAgentFile(ts, file)
	ts.Check(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	ts.Check(err)
	return pid
}

// jsonlcount DIR EVENT N: the records in DIR hold exactly N events named EVENT
// (N may be >=K).
func cmdJSONLCount(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: jsonlcount dir event n")
	}
	files, _ := filepath.Glob(filepath.Join(ts.MkAbs(args[0]), "*.jsonl"))
	n := 0
	for _, f := range files {
		data, _ := os.ReadFile(f)
		n += strings.Count(string(data), `"event":"`+args[1]+`"`)
	}
	want := args[2]
	if strings.HasPrefix(want, ">=") {
		k, _ := strconv.Atoi(want[2:])
		if (n >= k) == neg {
			ts.Fatalf("%d %s events, want %s", n, args[1], want)
		}
		return
	}
	k, _ := strconv.Atoi(want)
	if (n == k) == neg {
		ts.Fatalf("%d %s events, want %s", n, args[1], want)
	}
}

// tornline DIR: append half a JSON line to the newest record file, as a crash
// mid-write would leave it.
func cmdTornLine(ts *testscript.TestScript, neg bool, args []string) {
	files, _ := filepath.Glob(filepath.Join(ts.MkAbs(args[0]), "*.jsonl"))
	if len(files) == 0 {
		ts.Fatalf("no record files in %s", args[0])
	}
	f, err := os.OpenFile(files[len(files)-1], os.O_APPEND|os.O_WRONLY, 0)
	ts.Check(err)
	f.WriteString(`{"v":1,"ts":"2026-11-30T00:00:00Z","run":"x","event":"agent_e`)
	f.Close()
}

// recgrep PATTERN: some line of working-records/*.jsonl matches PATTERN.
func cmdRecGrep(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: recgrep pattern")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	files, _ := filepath.Glob(ts.MkAbs("working-records/*.jsonl"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(data), "\n") {
			if re.MatchString(line) {
				if neg {
					ts.Fatalf("record matches %q: %s", args[0], line)
				}
				return
			}
		}
	}
	if !neg {
		ts.Fatalf("no record matches %q", args[0])
	}
}

// lp CODE ARGS...: run looprinter ARGS and require exit code CODE. Its
// standard output and error are saved to lp.stdout and lp.stderr.
func cmdLP(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: lp code args...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	bin, err := exec.LookPath("looprinter")
	ts.Check(err)
	cmd := exec.Command(bin, args[1:]...)
	cmd.Dir = ts.Getenv("WORK")
	if d := ts.MkAbs("."); d != "" {
		cmd.Dir = d
	}
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "LOOPRINTER_TEST", "LOOPRINTER_STATE_DIR", "WORK"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	cmd.Env = env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	code := 0
	if runErr != nil {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			ts.Fatalf("run looprinter: %v", runErr)
		}
		code = ee.ExitCode()
	}
	os.WriteFile(ts.MkAbs("lp.stdout"), []byte(out.String()), 0o644)
	os.WriteFile(ts.MkAbs("lp.stderr"), []byte(errb.String()), 0o644)
	ts.Logf("looprinter %s: exit %d\n%s%s", strings.Join(args[1:], " "), code, errb.String(), out.String())
	if (code == want) == neg {
		ts.Fatalf("looprinter exited %d, want %d", code, want)
	}
}

// recwait PATTERN [TIMEOUT]: wait until some line of working-records/*.jsonl
// matches PATTERN.
func cmdRecWait(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || neg {
		ts.Fatalf("usage: recwait pattern [timeout]")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	timeout := waitDefault
	if len(args) > 1 {
		timeout, err = time.ParseDuration(args[1])
		ts.Check(err)
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(ts.MkAbs("working-records/*.jsonl"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			for _, line := range strings.Split(string(data), "\n") {
				if re.MatchString(line) {
					return
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("no record matched %q within %s", args[0], timeout)
}

// buildIntervals are the build runs of working-records/*.jsonl by task,
// each from its agent_start to that time plus its agent_end's duration
// (matched by agent_run where the records carry one, else the task's
// next agent_end).
func buildIntervals(ts *testscript.TestScript) map[string][][2]time.Time {
	type open struct {
		task string
		at   time.Time
	}
	out := map[string][][2]time.Time{}
	files, _ := filepath.Glob(ts.MkAbs("working-records/*.jsonl"))
	sort.Strings(files)
	var starts []open
	byRun := map[string]open{}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(data), "\n") {
			var ev struct {
				TS         time.Time `json:"ts"`
				Event      string    `json:"event"`
				Phase      string    `json:"phase"`
				Task       string    `json:"task"`
				AgentRun   string    `json:"agent_run"`
				DurationMS int64     `json:"duration_ms"`
			}
			if json.Unmarshal([]byte(line), &ev) != nil || ev.Phase != "build" {
				continue
			}
			switch ev.Event {
			case "agent_start":
				if ev.AgentRun != "" {
					byRun[ev.AgentRun] = open{ev.Task, ev.TS}
				} else {
					starts = append(starts, open{ev.Task, ev.TS})
				}
			case "agent_end":
				o, ok := byRun[ev.AgentRun]
				if ev.AgentRun == "" || !ok {
					for i, s := range starts {
						if s.task == ev.Task {
							o, ok = s, true
							starts = append(starts[:i:i], starts[i+1:]...)
							break
						}
					}
				}
				if ok {
					out[o.task] = append(out[o.task], [2]time.Time{o.at, o.at.Add(time.Duration(ev.DurationMS) * time.Millisecond)})
				}
			}
		}
	}
	return out
}

// overlap T1 T2: a build run of task T1 and one of T2 were under way at
// the same time (from the records).
func cmdOverlap(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: overlap task1 task2")
	}
	iv := buildIntervals(ts)
	if len(iv[args[0]]) == 0 || len(iv[args[1]]) == 0 {
		ts.Fatalf("no build run of %s or of %s in the records", args[0], args[1])
	}
	for _, a := range iv[args[0]] {
		for _, b := range iv[args[1]] {
			if a[0].Before(b[1]) && b[0].Before(a[1]) {
				if neg {
					ts.Fatalf("build runs of %s %v and %s %v overlap", args[0], a, args[1], b)
				}
				return
			}
		}
	}
	if !neg {
		ts.Fatalf("no build run of %s overlaps one of %s: %v, %v", args[0], args[1], iv[args[0]], iv[args[1]])
	}
}

// buildruns N: the records hold N agent_start records of build runs.
func cmdBuildRuns(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: buildruns n")
	}
	files, _ := filepath.Glob(ts.MkAbs("working-records/*.jsonl"))
	n := 0
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, `"event":"agent_start"`) && strings.Contains(line, `"phase":"build"`) {
				n++
			}
		}
	}
	if (strconv.Itoa(n) == args[0]) == neg {
		ts.Fatalf("%d build runs started, want %s", n, args[0])
	}
}

// cargoFound says whether Rust's cargo is on PATH or in the home folder's
// .cargo/bin (where rustup installs it, often not on a test's PATH).
func cargoFound() bool {
	if _, err := exec.LookPath("cargo"); err == nil {
		return true
	}
	for _, h := range []string{os.Getenv("HOME"), "/root"} {
		if fi, err := os.Stat(filepath.Join(h, ".cargo", "bin", "cargo")); h != "" && err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}
