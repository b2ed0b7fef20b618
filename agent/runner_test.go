//go:build !windows

package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func runCommand(t *testing.T, command string, mutate func(*Request)) Result {
	t.Helper()
	dir := t.TempDir()
	req := Request{Phase: "build", Dir: dir, Prompt: "hello agent\n", Backend: "command", Command: command,
		Transcript: filepath.Join(dir, "t.log"), Timeout: 20 * time.Second, Grace: 200 * time.Millisecond}
	if mutate != nil {
		mutate(&req)
	}
	ad, err := Lookup("command")
	if err != nil {
		t.Fatal(err)
	}
	return Run(context.Background(), req, ad, nil)
}

func TestPromptOnStdinThenEOF(t *testing.T) {
	res := runCommand(t, `sh -c 'cat; echo "<promise>DONE</promise>"'`, nil)
	if res.Status != StatusOK || res.Promise != "DONE" || !strings.Contains(res.FinalMessage, "hello agent") {
		t.Fatalf("%+v", res)
	}
	data, _ := os.ReadFile(res.Transcript)
	if string(data) != "hello agent\n<promise>DONE</promise>\n" {
		t.Fatalf("transcript %q", data)
	}
}

func TestTranscriptIsNeverOverwritten(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.log")
	os.WriteFile(path, []byte("earlier run"), 0o644)
	res := runCommand(t, "true", func(r *Request) { r.Transcript = path })
	if res.Status == StatusOK {
		t.Fatal("a run was allowed to overwrite an existing transcript")
	}
	if data, _ := os.ReadFile(path); string(data) != "earlier run" {
		t.Fatalf("transcript overwritten: %q", data)
	}
}

// A grandchild that leaves the process group (setsid) and keeps the output
// pipe open must not hang the engine.
func TestEscapedGrandchildCannotHangWait(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	res := runCommand(t, `sh -c 'setsid sh -c "echo \$\$ > `+pidFile+`; sleep 30" & sleep 0.2; echo done'`, nil)
	if res.Status != StatusOK {
		t.Fatalf("%+v", res)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Run took %s: a leaked pipe held it", d)
	}
	if b, err := os.ReadFile(pidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func TestContextCancelStopsTheGroup(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	ad, _ := Lookup("command")
	pidFile := filepath.Join(dir, "child.pid")
	// Cancelled once the child is running (on a loaded machine the shell
	// starts late: a fixed delay could cancel it before it started one).
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				break
			}
		}
		cancel()
	}()
	res := Run(ctx, Request{Dir: dir, Command: `sh -c 'sleep 60 & echo $! > ` + pidFile + `; trap "" TERM; sleep 60'`,
		Transcript: filepath.Join(dir, "t.log"), Grace: 200 * time.Millisecond}, ad, nil)
	if res.Status != StatusInterrupted {
		t.Fatalf("status %s", res.Status)
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid == 0 {
		t.Fatal("no child pid")
	}
	// Gone once reaped, however late on a loaded machine; a survivor sleeps
	// 60s, past the guard.
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d survived the interrupt", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestLongLinesAreCutForTheParserOnly(t *testing.T) {
	var got []int
	streamLines(strings.NewReader(strings.Repeat("x", MaxLine+500)+"\nshort\n"), func([]byte, bool) {}, func(l []byte) { got = append(got, len(l)) })
	if len(got) != 2 || got[0] != MaxLine || got[1] != 5 {
		t.Fatalf("line lengths %v", got)
	}
}

func TestChildEnvStripsSessionVariables(t *testing.T) {
	t.Setenv("CLAUDECODE", "1")
	t.Setenv("CLAUDE_CODE_ENTRYPOINT", "cli")
	env := strings.Join(ChildEnv(Request{Phase: "plan", Task: "T-001", Dir: "/d", Env: map[string]string{"X": "1"}}), "\n")
	for _, bad := range []string{"CLAUDECODE=", "CLAUDE_CODE_ENTRYPOINT="} {
		if strings.Contains(env, bad) {
			t.Errorf("child env has %s", bad)
		}
	}
	for _, good := range []string{"LOOPRINTER_PHASE=plan", "LOOPRINTER_TASK=T-001", "LOOPRINTER_DIR=/d", "X=1"} {
		if !strings.Contains(env, good) {
			t.Errorf("child env lacks %s", good)
		}
	}
}

// The agent reads its whole standard input, whatever its size: nothing,
// a prompt that fits in a pipe, and one far larger than a pipe's buffer.
func TestStdinReachesTheAgentWhole(t *testing.T) {
	for _, size := range []int{0, 3000, 1 << 20} {
		want := strings.Repeat("p", size)
		r, err := stdinFor(want)
		if err != nil {
			t.Fatal(err)
		}
		if size == 0 && r != nil {
			t.Fatalf("empty stdin: got a reader %T, want the null device (nil)", r)
		}
		if size == 3000 {
			if _, ok := r.(*os.File); !ok {
				t.Fatalf("a small stdin should be a filled pipe, got %T", r)
			}
		}
		cmd := exec.Command("wc", "-c")
		cmd.Stdin = r
		out, err := cmd.Output()
		if f, ok := r.(*os.File); ok {
			f.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(out)); got != strconv.Itoa(size) {
			t.Fatalf("stdin of %d bytes: the agent read %s", size, got)
		}
	}
}
