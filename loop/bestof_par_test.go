package loop

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

// rendezvous is a meeting point on the host's loopback for n checks: each
// check connects and waits for a line. Once n wait at once, each is told
// "together", and so is every later check; when the first has waited
// limit alone, the waiting ones are told "alone", and so is every later
// check. Checks judged one after another never meet.
type rendezvous struct {
	ln      net.Listener
	n       int
	limit   time.Duration
	mu      sync.Mutex
	waiting []net.Conn
	met     bool
	alone   bool
	most    int // the most checks that waited at once
}

func newRendezvous(t *testing.T, n int, limit time.Duration) *rendezvous {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener here: %v", err)
	}
	z := &rendezvous{ln: ln, n: n, limit: limit}
	t.Cleanup(func() { ln.Close() })
	go z.serve()
	return z
}

func (z *rendezvous) port() int { return z.ln.Addr().(*net.TCPAddr).Port }

func (z *rendezvous) serve() {
	for {
		c, err := z.ln.Accept()
		if err != nil {
			return
		}
		z.arrive(c)
	}
}

func (z *rendezvous) arrive(c net.Conn) {
	z.mu.Lock()
	defer z.mu.Unlock()
	switch {
	case z.met:
		z.tell(c, "together")
		return
	case z.alone:
		z.tell(c, "alone")
		return
	}
	z.waiting = append(z.waiting, c)
	z.most = max(z.most, len(z.waiting))
	if len(z.waiting) == z.n {
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

func (z *rendezvous) tell(c net.Conn, word string) {
	w := bufio.NewWriter(c)
	fmt.Fprintln(w, word)
	w.Flush()
	c.Close()
}

func (z *rendezvous) tellAll(word string) {
	for _, c := range z.waiting {
		z.tell(c, word)
	}
	z.waiting = nil
}

// The attempts of a best-of are judged at once: each attempt's check
// waits, up to 20 s, until the other attempt's check waits too (a meeting
// point on the loopback, the checks on the host's network). Judged one
// after another, the first attempt's check waits alone and fails, the
// second's too, and the best-of fails; judged at once, both pass and the
// loop is DONE. Each attempt's records still carry its own run.
func TestBestOfAttemptsJudgedAtOnce(t *testing.T) {
	needLayers(t, "a best-of needs a copy-on-write layer per attempt")
	if runtime.NumCPU() < 2 {
		t.Skipf("%d core: the attempts are judged one at a time here", runtime.NumCPU())
	}
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	z := newRendezvous(t, 2, 20*time.Second)
	check := fmt.Sprintf(`test -s out/a.txt && exec 3<>/dev/tcp/127.0.0.1/%d && read -r -t 60 word <&3 && echo "$word" && test "$word" = together`, z.port())
	files := map[string]string{
		"loop.yaml": "objective: \"out/a.txt says done\"\nagent: {backend: command, command: \"AGENT\", timeout: 60s}\n" +
			"budget: {iterations: 2}\nchecks: {network: host}\nverify: [bash check.sh]\n",
		"check.sh": check + "\n",
		"agent.txt": "== plan\nplan T-001:out/a.txt:attempts=2\n== build\n" +
			`run mkdir -p out; echo "done by $LOOPRINTER_ATTEMPT" > out/a.txt; echo "T-001: done" >> output/progress.txt` + "\nmark\n",
	}
	out, evs, _ := fakeLoopIn(t, t.TempDir(), files, nil, Options{})
	judged := events(evs, record.AttemptJudged)
	for _, e := range judged {
		t.Logf("attempt_judged: %s", e.Message)
	}
	if out.Reason != ReasonDone {
		t.Fatalf("%s: %s (the most checks waiting at once: %d of 2)", out.Reason, out.Summary, z.most)
	}
	if len(judged) != 2 {
		t.Fatalf("%d attempts judged, want 2", len(judged))
	}
	runs := map[string]int{}
	for _, e := range judged {
		if e.Pass == nil || !*e.Pass {
			t.Fatalf("attempt %d failed: %s", e.Attempt, e.FailureSignal)
		}
		runs[e.AgentRun] = e.Slot
	}
	// Each attempt's agent_end, written as it is judged, names its own run
	// and slot, as its attempt_judged does.
	ends := 0
	for _, e := range events(evs, record.AgentEnd) {
		if e.Task != "T-001" || e.Phase != "build" {
			continue
		}
		ends++
		if slot, ok := runs[e.AgentRun]; !ok || slot != e.Slot || e.Slot < 1 {
			t.Fatalf("an attempt's agent_end names run %q slot %d; the attempts are %v", e.AgentRun, e.Slot, runs)
		}
	}
	if ends != 2 || len(runs) != 2 {
		t.Fatalf("%d agent_end records for 2 attempts in runs %v", ends, runs)
	}
}
