package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// SIGKILL the engine again and again at different moments of a loop (a
// build run, a gate, a state write, a record write: wherever it happens to
// be), starting it again each time: the state always loads, every record
// line but a file's last is whole, each kill puts the state's count of
// agent runs at most one ahead of the records' (the run saved as in flight
// just before its agent_start was written), and the loop still ends DONE with every task
// passed once.
func TestKillAtAnyPointLosesAtMostOneStep(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts the engine a dozen times")
	}
	root := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin")
	os.MkdirAll(bin, 0o755)
	if err := os.Symlink(self, filepath.Join(bin, "looprinter")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := filepath.Join(root, "loop")
	os.MkdirAll(dir, 0o755)
	var tasks, checks []string
	for i := 1; i <= 9; i++ {
		tasks = append(tasks, "T-00"+string(rune('0'+i))+":f"+string(rune('0'+i))+".txt")
		checks = append(checks, `"test -s f`+string(rune('0'+i))+`.txt"`)
	}
	os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte("sandbox: off\nobjective: nine files\n"+
		"agent: {backend: command, command: looprinter fake-agent --script agent.txt}\n"+
		"budget: {iterations: 40}\nverify: ["+strings.Join(checks, ", ")+"]\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "agent.txt"), []byte("== plan\nplan "+strings.Join(tasks, " ")+"\n== build\nsleep 700ms\nauto\n"), 0o644)

	done, kills, lastGap := false, 0, 0
	for k := 0; k < 14 && !done; k++ {
		cmd := exec.Command(filepath.Join(bin, "looprinter"), "run", "-q")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// 40 ms to 1 s, in an order that does not repeat a rhythm.
		delay := time.Duration(40+(k*379)%960) * time.Millisecond
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
			done = err == nil
			t.Logf("run %d exited by itself: %v", k, err)
		case <-time.After(delay):
			cmd.Process.Kill()
			<-exited
			kills++
		}
		st, err := loop.LoadState(dir)
		if err != nil {
			t.Fatalf("kill %d after %s: the state does not load: %v", k, delay, err)
		}
		starts := countWholeRecords(t, dir, record.AgentStart)
		// A kill between the state's save of a run as in flight and the
		// run's agent_start record leaves the state one run ahead of the
		// records: one kill, at most one such run.
		gap := st.AgentRuns - starts
		if gap < 0 || gap > lastGap+1 {
			t.Fatalf("kill %d after %s: the state counts %d agent runs, the records %d (%d ahead before this kill)", k, delay, st.AgentRuns, starts, lastGap)
		}
		lastGap = gap
	}
	if kills < 5 {
		evs, _ := loopdir.Dir(dir).ReadRecords()
		for _, e := range evs {
			t.Log(record.Summarize(e))
		}
		t.Fatalf("only %d kills before the loop ended", kills)
	}
	if !done {
		// Let it finish.
		cmd := exec.Command(filepath.Join(bin, "looprinter"), "run", "-q")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the last run: %v\n%s", err, out)
		}
	}
	st, _ := loop.LoadState(dir)
	if st.Outcome != loop.ReasonDone || st.TasksPassed != 9 {
		t.Fatalf("outcome %s with %d tasks passed, want DONE with 9", st.Outcome, st.TasksPassed)
	}
}

// countWholeRecords counts the records of one kind, failing on a line that
// does not parse anywhere but at the end of a file (a torn last write).
func countWholeRecords(t *testing.T, dir, kind string) int {
	t.Helper()
	files, err := loopdir.Dir(dir).RecordFiles()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		sc.Buffer(nil, 16<<20)
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		for i, l := range lines {
			var e record.Event
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				if i == len(lines)-1 && !strings.HasSuffix(string(data), "\n") {
					continue // torn by the kill
				}
				t.Fatalf("%s line %d does not parse: %v", f, i+1, err)
			}
			if e.Event == kind {
				n++
			}
		}
	}
	return n
}
