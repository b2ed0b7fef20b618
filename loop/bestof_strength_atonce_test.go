package loop

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

// passMeet is a meeting point on the host's loopback for the checks of
// two strength passes: a check of a mutant connects, names its attempt
// and waits for a line. Once checks of two different attempts wait at
// once, each is told "together", and so is every later check; when the
// first has waited limit without meeting one of another attempt, the
// waiting ones are told "alone", and so is every later check (limit 0:
// every check is told "alone" at once). Passes run one after another
// never meet: a pass's mutants are judged one at a time.
type passMeet struct {
	ln      net.Listener
	limit   time.Duration
	mu      sync.Mutex
	waiting map[net.Conn]string // a waiting check → its attempt
	met     bool
	alone   bool
	most    int // the most attempts whose checks waited at once
	checks  int // the checks of mutants that came
}

func newPassMeet(t *testing.T, limit time.Duration) *passMeet {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener here: %v", err)
	}
	z := &passMeet{ln: ln, limit: limit, waiting: map[net.Conn]string{}}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go z.arrive(c)
		}
	}()
	return z
}

func (z *passMeet) port() int { return z.ln.Addr().(*net.TCPAddr).Port }

func (z *passMeet) arrive(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	attempt, _ := bufio.NewReader(c).ReadString('\n')
	attempt = strings.TrimSpace(attempt)
	z.mu.Lock()
	defer z.mu.Unlock()
	z.checks++
	switch {
	case z.met:
		meetTell(c, "together")
		return
	case z.alone || z.limit <= 0:
		meetTell(c, "alone")
		return
	}
	z.waiting[c] = attempt
	distinct := map[string]bool{}
	for _, a := range z.waiting {
		distinct[a] = true
	}
	z.most = max(z.most, len(distinct))
	if len(distinct) >= 2 {
		z.met = true
		z.tellAll("together")
		return
	}
	if len(z.waiting) == 1 {
		time.AfterFunc(z.limit, func() {
			z.mu.Lock()
			defer z.mu.Unlock()
			if !z.met {
				z.alone = true
				z.tellAll("alone")
			}
		})
	}
}

func meetTell(c net.Conn, word string) {
	fmt.Fprintln(c, word)
	c.Close()
}

func (z *passMeet) tellAll(word string) {
	for c := range z.waiting {
		meetTell(c, word)
	}
	z.waiting = map[net.Conn]string{}
}

func (z *passMeet) seen() (met bool, most, checks int) {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.met, z.most, z.checks
}

// The strength passes of a best-of's passing attempts run at once, and
// pick as the passes one after another do. Two attempts of a Python task
// pass its check: attempt 1 special-cases the test's inputs (the smaller
// change), attempt 2 is an honest fix (the larger change). The check of a
// mutant (calc.py differs from the attempt's own copy, calc.orig) first
// waits, up to 20 s, at a meeting point on the loopback until a mutant of
// the other attempt waits too, then runs the test as any check does: its
// verdict does not depend on the meeting. Passes run one after another
// never meet. The run with the machine's cores must meet; a run with one
// check at a time (checkWorkers 1) must keep the same attempt and write
// the same attempt_judged and best_of_chosen records, in the same order.
func TestBestOfStrengthPassesAtOnce(t *testing.T) {
	needLayers(t, "a best-of needs a copy-on-write layer per attempt")
	if runtime.NumCPU() < 2 {
		t.Skipf("%d core: the strength passes run one at a time here", runtime.NumCPU())
	}
	python := "/usr/bin/python3" // not a version manager's shim, which the box may not run
	if _, err := os.Stat(python); err != nil {
		if python, err = exec.LookPath("python3"); err != nil {
			t.Skip("no python3 here")
		}
	}
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	special := `def add(a, b):\n    if a == 2 and b == 3:\n        return 5\n    return 0\n`
	honest := `# add returns the sum of a and b:\n# it holds for every pair of numbers,\n# not only for the ones the test tries,\n# and it special-cases no input.\n# (This comment makes this change the larger one.)\ndef add(a, b):\n    return a + b\n`
	files := func(port int) map[string]string {
		check := fmt.Sprintf(`test -s out/a.txt || exit 1
if ! cmp -s calc.py calc.orig; then
	exec 3<>/dev/tcp/127.0.0.1/%d || exit 3
	cat out/a.txt >&3
	read -r -t 60 word <&3
	echo "mutant of attempt $(cat out/a.txt): $word"
	exec 3<&-
fi
PYTHONDONTWRITEBYTECODE=1 %s -c 'import calc; assert calc.add(2, 3) == 5'
`, port, python)
		return map[string]string{
			"loop.yaml": "objective: \"calc.add adds\"\nagent: {backend: command, command: \"AGENT\", timeout: 60s}\n" +
				"budget: {iterations: 2}\nchecks: {network: host}\nverify: [bash check.sh]\n",
			"check.sh": check,
			"calc.py":  "def add(a, b):\n    return 0\n",
			"agent.txt": "== plan\nplan T-001:calc.py:attempts=2\n== build\n" +
				`run mkdir -p out; if [ "$LOOPRINTER_ATTEMPT" = 1 ]; then printf '` + special + `' > calc.py; else printf '` + honest + `' > calc.py; fi; cp calc.py calc.orig; echo "$LOOPRINTER_ATTEMPT" > out/a.txt; echo "T-001: done" >> output/progress.txt` + "\nmark\n",
		}
	}
	type picked struct {
		judged []record.Event
		chosen []record.Event
	}
	run := func(name string, z *passMeet) picked {
		out, evs, _ := fakeLoopIn(t, t.TempDir(), files(z.port()), nil, Options{})
		p := picked{judged: events(evs, record.AttemptJudged), chosen: events(evs, record.BestOfChosen)}
		for _, e := range p.judged {
			t.Logf("%s: attempt_judged: %s", name, e.Message)
		}
		if out.Reason != ReasonDone {
			t.Fatalf("%s: %s: %s", name, out.Reason, out.Summary)
		}
		return p
	}

	z := newPassMeet(t, 20*time.Second)
	start := time.Now()
	atOnce := run("at once", z)
	met, most, checks := z.seen()
	t.Logf("at once: %d checks of mutants, the most attempts waiting at once %d, in %s", checks, most, time.Since(start).Round(time.Millisecond))
	if checks < 2 {
		t.Fatalf("%d checks of mutants: both passes should run theirs", checks)
	}
	if !met {
		t.Fatalf("the strength passes never ran at once: the most attempts whose mutants' checks waited at once was %d of 2", most)
	}

	// The same best-of with one check at a time: the passes one after
	// another, as before they ran at once.
	prev := checkWorkers
	checkWorkers = func() int { return 1 }
	t.Cleanup(func() { checkWorkers = prev })
	one := newPassMeet(t, 0)
	serial := run("one at a time", one)
	if _, most, _ := one.seen(); most > 0 {
		t.Fatalf("one check at a time, yet %d attempts waited at once", most)
	}

	// The pick: the honest fix, pinned better by the checks, not the
	// smaller special case; the same records as one at a time.
	if len(atOnce.judged) != 2 || len(atOnce.chosen) != 1 || atOnce.chosen[0].Attempt != 2 {
		t.Fatalf("at once: %d attempt_judged, best_of_chosen %+v; want attempt 2 kept", len(atOnce.judged), atOnce.chosen)
	}
	for _, e := range atOnce.judged {
		if e.Attempt == 1 && (e.Kind != "passed" || !strings.Contains(e.Message, "the checks caught")) ||
			e.Attempt == 2 && e.Kind != "kept" {
			t.Fatalf("at once: attempt %d is %q: %s", e.Attempt, e.Kind, e.Message)
		}
	}
	if len(serial.judged) != len(atOnce.judged) || len(serial.chosen) != len(atOnce.chosen) {
		t.Fatalf("one at a time: %d attempt_judged and %d best_of_chosen; at once %d and %d", len(serial.judged), len(serial.chosen), len(atOnce.judged), len(atOnce.chosen))
	}
	for i, e := range atOnce.judged {
		s := serial.judged[i]
		if e.Attempt != s.Attempt || e.Kind != s.Kind || e.Slot != s.Slot || e.Message != s.Message || passOf(e) != passOf(s) || e.FailureSignal != s.FailureSignal {
			t.Fatalf("attempt_judged %d differs:\nat once:       attempt %d %q %s\none at a time: attempt %d %q %s", i+1, e.Attempt, e.Kind, e.Message, s.Attempt, s.Kind, s.Message)
		}
	}
	if c, s := atOnce.chosen[0], serial.chosen[0]; c.Attempt != s.Attempt || c.By != s.By || c.Reason != s.Reason {
		t.Fatalf("best_of_chosen differs: at once attempt %d by %s (%s); one at a time attempt %d by %s (%s)", c.Attempt, c.By, c.Reason, s.Attempt, s.By, s.Reason)
	}
}

// passOf is a record's pass, "" when it has none.
func passOf(e record.Event) string {
	if e.Pass == nil {
		return ""
	}
	return fmt.Sprint(*e.Pass)
}
