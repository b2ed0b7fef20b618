// Package fakeagent is a scripted stand-in for a coding agent, for the
// engine's own tests and the demo. It runs as `looprinter fake-agent
// --script FILE` behind the command backend.
//
// A script is a list of steps, each headed by "== PHASE" (plan, replan,
// build, ralph, a post phase's name, or * for any). Each run takes the next
// unused step of its phase (then of *); when they run out, the last one
// repeats. A step is one action per line:
//
//	auto                  do what the phase asks: plan 3 tasks, do the task, print the done signal
//	plan T-001:file[:true][:after=T-002,T-003][:attempts=N][:touches=G1,G2] ...   write output/plan.json with these tasks (after=: depends_on; attempts=: attempts; touches=: touches)
//	do [TEXT]             do the current task: write its target, mark it, append progress
//	mark [ID]             mark a task passes: true without doing it
//	unmark ID             mark a task passes: false
//	write PATH TEXT       write TEXT (\n for newlines) to PATH
//	append PATH TEXT      append TEXT to PATH
//	rm PATH               remove PATH
//	progress TEXT         append TEXT to output/progress.txt
//	say TEXT              print TEXT
//	findings JSON         write JSON to the file the prompt names on its "Output file: PATH" line (review shape); print it when there is none
//	echo-prompt           print the prompt as received on stdin
//	promise WORD          print <promise>WORD</promise>
//	blocked REASON        print <blocked>REASON</blocked>
//	cost USD [IN OUT]     report spend: prints a ::looprinter line
//	run SHELL             run a shell command in the loop directory
//	sleep DURATION        sleep (e.g. 10s)
//	ignore-term           ignore SIGTERM from now on
//	flood BYTES           print BYTES bytes of output (1K, 10M, 1G …)
//	grandchild DURATION   leave `sleep` running in the background; its pid goes to grandchild.pid
//	exit CODE             exit now with CODE
package fakeagent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// Step is one scripted agent run.
type Step struct {
	Phase   string
	Actions []string
}

// Parse reads a script.
func Parse(src string) ([]Step, error) {
	var steps []Step
	for i, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if strings.HasPrefix(t, "==") {
			steps = append(steps, Step{Phase: strings.TrimSpace(strings.TrimPrefix(t, "=="))})
			continue
		}
		if len(steps) == 0 {
			return nil, fmt.Errorf("line %d: action before the first \"== PHASE\" header", i+1)
		}
		steps[len(steps)-1].Actions = append(steps[len(steps)-1].Actions, t)
	}
	return steps, nil
}

// Main runs the fake agent and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	script := os.Getenv("LOOPRINTER_FAKE_SCRIPT")
	for i := 0; i < len(args); i++ {
		if args[i] == "--script" && i+1 < len(args) {
			script = args[i+1]
			i++
		}
	}
	dir := os.Getenv("LOOPRINTER_DIR")
	if dir == "" {
		dir, _ = os.Getwd()
	}
	prompt, _ := io.ReadAll(stdin)
	a := &runner{dir: dir, prompt: string(prompt), out: stdout, errOut: stderr, phase: os.Getenv("LOOPRINTER_PHASE"), task: os.Getenv("LOOPRINTER_TASK")}
	actions := []string{"auto"}
	if script != "" {
		if !filepath.IsAbs(script) {
			script = filepath.Join(dir, script)
		}
		src, err := os.ReadFile(script)
		if err != nil {
			fmt.Fprintln(stderr, "fake-agent:", err)
			return 2
		}
		steps, err := Parse(string(src))
		if err != nil {
			fmt.Fprintln(stderr, "fake-agent:", err)
			return 2
		}
		actions = a.pick(steps)
	}
	for _, act := range actions {
		if code, stop := a.do(act); stop {
			return code
		}
	}
	return 0
}

type runner struct {
	dir, prompt, phase, task string
	out, errOut              io.Writer
}

// runsBefore counts the runs of this phase before this one from the
// records: each run has an agent_start, each retried try an agent_retry.
func (a *runner) runsBefore() (int, bool) {
	evs, _ := loopdir.Dir(a.dir).ReadRecords()
	n := 0
	for _, e := range evs {
		if e.Phase == a.phase && (e.Event == record.AgentStart || e.Event == record.AgentRetry) {
			n++
		}
		if a.phase == "supervisor" && e.Event == record.Supervisor && e.Status == "started" {
			n++ // the supervisor's runs are recorded as supervisor events
		}
	}
	return max(n-1, 0), n > 0
}

// pick chooses this run's step: the next unused one of its phase.
func (a *runner) pick(steps []Step) []string {
	// Under an engine, this phase's earlier runs (and retried tries) are
	// counted in the records it wrote (the current run's agent_start is
	// there): a confined agent cannot keep a counter of its own, since
	// what it writes in working-records/ is refused or discarded. Run by
	// hand, with no such record, it keeps a counter.
	n, ok := a.runsBefore()
	if !ok {
		counter := loopdir.Dir(a.dir).InRecords(".fake-agent-" + sanitize(a.phase))
		if b, err := os.ReadFile(counter); err == nil {
			n, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		os.MkdirAll(filepath.Dir(counter), 0o755)
		os.WriteFile(counter, []byte(strconv.Itoa(n+1)), 0o644)
	}
	for _, want := range []string{a.phase, "*"} {
		var mine []Step
		for _, s := range steps {
			if s.Phase == want {
				mine = append(mine, s)
			}
		}
		if len(mine) > 0 {
			if n >= len(mine) {
				n = len(mine) - 1
			}
			return mine[n].Actions
		}
	}
	return []string{"auto"}
}

var nonWord = regexp.MustCompile(`[^A-Za-z0-9_-]`)

func sanitize(s string) string { return nonWord.ReplaceAllString(s, "_") }

func (a *runner) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(a.dir, p)
}

func unescape(s string) string { return strings.ReplaceAll(s, `\n`, "\n") }

var donePrompt = regexp.MustCompile(`<promise>([^<>\n]+)</promise>`)

// outputFile is the line of a review prompt naming where its JSON goes.
var outputFile = regexp.MustCompile(`(?m)^Output file: (\S+)\s*$`)

func (a *runner) do(action string) (int, bool) {
	verb, rest, _ := strings.Cut(action, " ")
	rest = strings.TrimSpace(rest)
	switch verb {
	case "auto":
		switch a.phase {
		case "plan", "replan":
			a.do("plan T-001:out/one.txt T-002:out/two.txt T-003:out/three.txt")
		case "build", "ralph":
			a.do("do")
		default:
			if m := donePrompt.FindStringSubmatch(a.prompt); m != nil {
				a.do("promise " + m[1])
			}
		}
	case "plan":
		var tasks []map[string]any
		for _, spec := range strings.Fields(rest) {
			parts := strings.Split(spec, ":")
			if len(parts) < 2 {
				fmt.Fprintf(a.errOut, "fake-agent: plan wants ID:FILE[:true], got %q\n", spec)
				return 2, true
			}
			t := map[string]any{"id": parts[0], "title": "Write " + parts[1], "description": "Create " + parts[1] + " with its content",
				"targetFile": parts[1], "passes": false, "notes": ""}
			for _, opt := range parts[2:] {
				if opt == "true" {
					t["passes"] = true
				} else if deps, ok := strings.CutPrefix(opt, "after="); ok {
					t["depends_on"] = strings.Split(deps, ",")
				} else if n, ok := strings.CutPrefix(opt, "attempts="); ok {
					t["attempts"], _ = strconv.Atoi(n)
				} else if globs, ok := strings.CutPrefix(opt, "touches="); ok {
					t["touches"] = strings.Split(globs, ",")
				}
			}
			tasks = append(tasks, t)
		}
		b, _ := json.MarshalIndent(map[string]any{"tasks": tasks}, "", "  ")
		writeFile(a.path("output/plan.json"), string(b)+"\n")
		fmt.Fprintf(a.out, "planned %d tasks\n", len(tasks))
	case "do":
		plan := a.readPlan()
		id := a.task
		for _, t := range planTasks(plan) {
			if id == "" && t["passes"] == false {
				id, _ = t["id"].(string)
			}
			if t["id"] == id {
				target, _ := t["targetFile"].(string)
				text := unescape(rest)
				if text == "" {
					text = fmt.Sprintf("%s done by the fake agent at %s\n", id, time.Now().Format(time.RFC3339Nano))
				}
				writeFile(a.path(target), text)
				t["passes"] = true
			}
		}
		a.writePlan(plan)
		appendFile(a.path("output/progress.txt"), fmt.Sprintf("%s: done (fake agent)\n", id))
		fmt.Fprintf(a.out, "did %s\n", id)
	case "mark", "unmark":
		id := rest
		if id == "" {
			id = a.task
		}
		plan := a.readPlan()
		for _, t := range planTasks(plan) {
			if t["id"] == id {
				t["passes"] = verb == "mark"
			}
		}
		a.writePlan(plan)
	case "write":
		p, text, _ := strings.Cut(rest, " ")
		writeFile(a.path(p), unescape(text)+"\n")
	case "append":
		p, text, _ := strings.Cut(rest, " ")
		appendFile(a.path(p), unescape(text)+"\n")
	case "rm":
		os.Remove(a.path(rest))
	case "progress":
		appendFile(a.path("output/progress.txt"), unescape(rest)+"\n")
	case "say":
		fmt.Fprintln(a.out, unescape(rest))
	case "findings":
		if m := outputFile.FindStringSubmatch(a.prompt); m != nil {
			writeFile(a.path(m[1]), unescape(rest)+"\n")
			fmt.Fprintf(a.out, "wrote %s\n", m[1])
		} else {
			fmt.Fprintln(a.out, unescape(rest))
		}
	case "echo-prompt":
		io.WriteString(a.out, a.prompt)
	case "promise":
		fmt.Fprintf(a.out, "<promise>%s</promise>\n", rest)
	case "blocked":
		fmt.Fprintf(a.out, "<blocked>%s</blocked>\n", rest)
	case "cost":
		f := strings.Fields(rest)
		if len(f) == 0 {
			fmt.Fprintln(a.errOut, "fake-agent: cost wants USD [IN OUT]")
			return 2, true
		}
		line := "::looprinter cost_usd=" + f[0]
		if len(f) >= 3 {
			line += " input_tokens=" + f[1] + " output_tokens=" + f[2]
		}
		fmt.Fprintln(a.out, line+" turns=1")
	case "run":
		cmd := exec.Command("/bin/sh", "-c", rest)
		cmd.Dir, cmd.Stdout, cmd.Stderr = a.dir, a.out, a.errOut
		cmd.Run()
	case "sleep":
		d, _ := time.ParseDuration(rest)
		time.Sleep(d)
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
	case "flood":
		n := parseSize(rest)
		line := []byte(strings.Repeat("x", 1023) + "\n")
		w := bufio.NewWriterSize(a.out, 256<<10)
		for n > 0 {
			k := int64(len(line))
			if n < k {
				k = n
			}
			w.Write(line[:k])
			n -= k
		}
		w.Flush()
	case "grandchild":
		cmd := exec.Command("sleep", strconv.Itoa(int(parseDur(rest).Seconds())))
		cmd.Start()
		writeFile(a.path("grandchild.pid"), strconv.Itoa(cmd.Process.Pid)+"\n")
	case "exit":
		code, _ := strconv.Atoi(rest)
		return code, true
	default:
		fmt.Fprintf(a.out, "fake-agent: unknown action %q\n", action)
		return 3, true
	}
	return 0, false
}

func (a *runner) readPlan() map[string]any {
	var plan map[string]any
	b, _ := os.ReadFile(a.path("output/plan.json"))
	json.Unmarshal(b, &plan)
	if plan == nil {
		plan = map[string]any{}
	}
	return plan
}

func (a *runner) writePlan(plan map[string]any) {
	b, _ := json.MarshalIndent(plan, "", "  ")
	writeFile(a.path("output/plan.json"), string(b)+"\n")
}

func planTasks(plan map[string]any) []map[string]any {
	var out []map[string]any
	list, _ := plan["tasks"].([]any)
	for _, t := range list {
		if m, ok := t.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func writeFile(p, text string) {
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(text), 0o644)
}

func appendFile(p, text string) {
	os.MkdirAll(filepath.Dir(p), 0o755)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err == nil {
		f.WriteString(text)
		f.Close()
	}
}

func parseSize(s string) int64 {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return n * mult
}

func parseDur(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		return time.Minute
	}
	return d
}
