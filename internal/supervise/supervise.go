// Package supervise is the outer loop, automated: it watches a loop's
// records, and when the loop repeats a failure, stalls on the objective
// gap, or keeps failing the cycle gate after all tasks pass, it runs a
// supervising agent (its own backend and model: agents.supervisor) with the
// records and the loop file. The agent may rewrite prompts and tighten
// limits; any other change (spec.Judge: default deny) is refused,
// recorded, and the previous loop file is restored: the gate is the point
// of the loop.
package supervise

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/shlex"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// Trigger kinds.
const (
	RepeatedFailure = "repeated_failure"   // the same failure again and again
	GapStall        = "gap_stall"          // the objective gap did not move
	CycleGateFails  = "cycle_gate_failing" // the cycle gate keeps failing after all tasks pass
)

// Trigger is why the supervisor steps in.
type Trigger struct {
	Kind   string    `json:"kind"`
	Detail string    `json:"detail"`
	At     time.Time `json:"at"` // the record that tripped it
}

// Detect looks at a loop's records after since (time order) and returns
// the first reason to step in, if any.
func Detect(evs []record.Event, since time.Time) (Trigger, bool) {
	var cycleFails, gapSame int
	var gapSig string
	for _, e := range evs {
		if !e.TS.After(since) {
			continue
		}
		switch {
		case e.Event == record.SameFailure && e.Repeats >= 2:
			return Trigger{Kind: RepeatedFailure, At: e.TS,
				Detail: fmt.Sprintf("the same failure came back %d times in a row (signature %s):\n%s", e.Repeats, e.Signature, clip(e.FailureSignal, 2000))}, true
		case e.Event == record.LoopStop && e.Reason == loop.ReasonNoProgress:
			return Trigger{Kind: RepeatedFailure, At: e.TS, Detail: "the loop stopped with NO PROGRESS: " + e.Summary}, true
		case e.Event == record.Verify && e.Gate == "objective" && e.Pass != nil:
			if *e.Pass {
				gapSig, gapSame = "", 0
				continue
			}
			if e.Signature == gapSig {
				gapSame++
			} else {
				gapSig, gapSame = e.Signature, 1
			}
			if gapSame >= 2 {
				return Trigger{Kind: GapStall, At: e.TS,
					Detail: fmt.Sprintf("the objective gap stayed the same for %d cycles:\n%s", gapSame, clip(e.FailureSignal, 2000))}, true
			}
		case e.Event == record.Verify && e.Gate == "cycle" && e.Pass != nil:
			if *e.Pass {
				cycleFails = 0
				continue
			}
			cycleFails++
			if cycleFails >= 2 {
				return Trigger{Kind: CycleGateFails, At: e.TS,
					Detail: fmt.Sprintf("the cycle gate failed %d cycles in a row after the plan's tasks were done:\n%s", cycleFails, clip(e.FailureSignal, 2000))}, true
			}
		}
	}
	return Trigger{}, false
}

// Memory is what the supervisor remembers about a loop between passes,
// kept in the loop's working-records/supervisor.json.
type Memory struct {
	Handled time.Time `json:"handled"` // records up to here have been acted on
	Runs    int       `json:"runs"`
}

func memoryPath(dir string) string { return loopdir.Dir(dir).Supervisor() }

// LoadMemory reads a loop's supervisor memory.
func LoadMemory(dir string) Memory {
	var m Memory
	if b, err := os.ReadFile(memoryPath(dir)); err == nil {
		json.Unmarshal(b, &m)
	}
	return m
}

// Save writes it.
func (m Memory) Save(dir string) error {
	b, _ := json.MarshalIndent(m, "", "  ")
	return os.WriteFile(memoryPath(dir), append(b, '\n'), 0o644)
}

// Result is what one supervision did.
type Result struct {
	Status  string   // accepted, refused, unchanged, failed
	Changes []string // what changed in the loop file
	Refused []string // why a change was refused
	Error   string
}

// Supervisor runs the supervising agent on one loop.
type Supervisor struct {
	Dir  string // the loop's directory (where it runs)
	File string // its loop file (the one the engine reads)
	// Records receives the supervisor's own records (accepted, refused).
	Records func(record.Event)
}

// Run runs the supervising agent for a trigger and judges its change: an
// accepted change is written to the loop file, a refused one never is.
// Call it while no agent run of the loop is in progress (the loop paused
// or stopped): the engine treats the loop file as protected during runs.
func (s *Supervisor) Run(ctx context.Context, trig Trigger, evs []record.Event) Result {
	before, err := spec.ReadFile(s.File)
	if err != nil {
		return s.finish(Result{Status: "failed", Error: err.Error()}, trig)
	}
	old, err := spec.Parse(before, s.File)
	if err != nil {
		return s.finish(Result{Status: "failed", Error: "the loop file is invalid before supervision: " + err.Error()}, trig)
	}
	scripts := snapshotScripts(s.Dir, old.GateChecks())
	a := old.AgentFor("supervisor", false)
	ad, err := agent.Lookup(a.Backend)
	if err != nil {
		return s.finish(Result{Status: "failed", Error: err.Error()}, trig)
	}
	// The agent edits a copy; only an accepted change reaches the loop file
	// the engine reads, so a running loop never sees a refused one.
	work := loopdir.Dir(s.Dir).SupervisorWork(filepath.Base(s.File))
	os.MkdirAll(filepath.Dir(work), 0o755)
	// The supervising agent runs confined like the loop's own agents: the
	// live loop file, the records, the engine's state and the check scripts
	// are read-only to it.
	wrap, _, err := confine.Confine(old, scriptPaths(scripts))
	if err != nil {
		return s.finish(Result{Status: "failed", Error: err.Error()}, trig)
	}
	if err := os.WriteFile(work, before, 0o644); err != nil {
		return s.finish(Result{Status: "failed", Error: err.Error()}, trig)
	}
	tdir := loopdir.Dir(s.Dir).Transcripts()
	os.MkdirAll(tdir, 0o755)
	stamp := time.Now().UTC().Format("20060102T150405.000")
	red := loop.Redactor(old)
	prompt := red.String(Prompt(old, work, string(before), trig, evs, s.Dir))
	promptFile := filepath.Join(tdir, "supervisor-"+stamp+".prompt.md")
	os.WriteFile(promptFile, []byte(prompt), 0o644)
	req := agent.Request{
		Phase: "supervisor", Dir: s.Dir, Prompt: prompt, PromptFile: promptFile,
		Transcript: filepath.Join(tdir, "supervisor-"+stamp+".log"),
		Backend:    a.Backend, Model: a.Model, Command: a.Command, Args: a.Args,
		Env:         mergeEnv(a.Env, map[string]string{"LOOPRINTER_LOOP_FILE": work, "LOOPRINTER_TRIGGER": trig.Kind}),
		Permissions: a.Permissions, Timeout: a.Timeout.D(), IdleTimeout: a.IdleTimeout.D(), Grace: a.Grace.D(),
		MaxTurns: a.MaxTurns, MaxBudgetUSD: a.MaxBudgetUSD, Wrap: wrap, Redact: red,
	}
	s.emit(record.Event{Event: record.Supervisor, Status: "started", Kind: trig.Kind, Backend: a.Backend, Model: a.Model,
		PromptFile: rel(s.Dir, promptFile), Message: firstLine(trig.Detail)})
	res := agent.Run(ctx, req, ad, nil)
	tampered := restoreScripts(scripts)
	var refused []string
	if live, _ := spec.ReadFile(s.File); !bytes.Equal(live, before) {
		writeFile(s.File, before)
		refused = append(refused, "edited the live loop file instead of "+rel(s.Dir, work)+" (restored)")
	}
	for _, t := range tampered {
		refused = append(refused, "changed the check script "+rel(s.Dir, t)+" (restored)")
	}
	if res.Status != agent.StatusOK && res.Status != agent.StatusCapped {
		return s.finish(Result{Status: "failed", Refused: refused, Error: fmt.Sprintf("the supervising agent run ended %s: %s", res.Status, res.Error)}, trig)
	}
	after, err := spec.ReadFile(work)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			refused = append(refused, "deleted the loop file")
		} else {
			refused = append(refused, "left a loop file that cannot be read: "+err.Error())
		}
		return s.finish(Result{Status: "refused", Refused: refused}, trig)
	}
	if bytes.Equal(after, before) && len(refused) == 0 {
		return s.finish(Result{Status: "unchanged"}, trig)
	}
	r := Judge(before, after, s.File)
	r.Refused = append(refused, r.Refused...)
	if len(r.Refused) > 0 {
		r.Status = "refused"
		return s.finish(r, trig)
	}
	if err := writeFile(s.File, after); err != nil {
		return s.finish(Result{Status: "failed", Changes: r.Changes, Error: err.Error()}, trig)
	}
	r.Status = "accepted"
	return s.finish(r, trig)
}

func (s *Supervisor) finish(r Result, trig Trigger) Result {
	ev := record.Event{Event: record.Supervisor, Status: r.Status, Kind: trig.Kind, Changes: r.Changes, Errors: r.Refused, Error: r.Error,
		File: s.File, Pass: record.Bool(r.Status == "accepted" || r.Status == "unchanged")}
	switch r.Status {
	case "accepted":
		ev.Message = "the supervisor's change to the loop file was accepted: " + strings.Join(r.Changes, "; ")
	case "refused":
		ev.Message = "REFUSED the supervisor's change (it weakens a gate); the previous loop file was restored: " + strings.Join(r.Refused, "; ")
	case "unchanged":
		ev.Message = "the supervisor changed nothing"
	default:
		ev.Message = "supervision failed: " + r.Error
	}
	s.emit(ev)
	return r
}

func (s *Supervisor) emit(ev record.Event) {
	if s.Records != nil {
		s.Records(ev)
	}
}

// Judge compares the loop file before and after the supervisor's run: what
// changed, and every change that removes or weakens a gate (spec.Judge).
func Judge(before, after []byte, path string) Result {
	v := spec.Judge(before, after, path)
	return Result{Changes: v.Changes, Refused: v.Refused}
}

// Prompt is what the supervising agent is told.
func Prompt(l *spec.Loop, work, loopFile string, trig Trigger, evs []record.Event, dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You supervise an automated coding loop run by looprinter. It is stuck; your job is to improve the loop's harness so that the next agent runs succeed.\n\n")
	fmt.Fprintf(&b, "Key objective of the loop: %s\n\n", l.Objective)
	fmt.Fprintf(&b, "Why you were called (%s):\n%s\n\n", trig.Kind, trig.Detail)
	fmt.Fprintf(&b, "The loop file is %s; edit your copy of it at %s (YAML). You may edit ONLY that copy, and in it:\n", l.Path, work)
	b.WriteString("- rewrite prompts (prompts.plan, prompts.build, prompts.replan, prompts.ralph, a post phase's prompt) and vars to steer the agents around the repeated failure;\n")
	b.WriteString("- tighten limits: lower a budget or a per-run cap (timeout, idle_timeout, max_turns, max_budget_usd), add protect entries.\n")
	b.WriteString("Every other change is refused and the file is restored. In particular you must NOT add, remove, reorder or reword any verify or objective_verify check (an added check would run outside the agent's sandbox), change setup, the agents' backend, model, command, args, env or permissions, change the objective, remove protect entries, raise any budget or cap, or edit check scripts. The gates are the point of the loop.\n\n")
	fmt.Fprintf(&b, "Current loop file:\n```yaml\n%s\n```\n\n", strings.TrimSpace(loopFile))
	if p, err := os.ReadFile(loopdir.Dir(dir).Progress()); err == nil {
		fmt.Fprintf(&b, "Last lines of output/progress.txt:\n```\n%s\n```\n\n", tailLines(string(p), 30))
	}
	b.WriteString("Recent records (oldest first):\n```\n")
	start := 0
	var lines []string
	for _, e := range evs {
		if e.Event == record.ToolCall {
			continue
		}
		lines = append(lines, firstLine(record.Summarize(e)))
	}
	if len(lines) > 60 {
		start = len(lines) - 60
	}
	b.WriteString(strings.Join(lines[start:], "\n"))
	b.WriteString("\n```\n\nThe full records are in working-records/*.jsonl and the agents' transcripts in working-records/transcripts/. Make your change to the loop file, then stop.\n")
	return b.String()
}

// snapshotScripts keeps the files that check commands name (scripts the
// gates run), so a supervisor cannot weaken a gate by editing them.
func snapshotScripts(dir string, cmds []string) map[string][]byte {
	out := map[string][]byte{}
	for _, c := range cmds {
		words, err := shlex.Split(c)
		if err != nil {
			continue
		}
		for _, w := range words {
			p := w
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() < 1<<20 {
				if data, err := os.ReadFile(p); err == nil {
					out[p] = data
				}
			}
		}
	}
	return out
}

// restoreScripts puts back every snapshotted file that changed and returns
// their paths.
func restoreScripts(snap map[string][]byte) []string {
	var changed []string
	for p, data := range snap {
		now, err := os.ReadFile(p)
		if err == nil && bytes.Equal(now, data) {
			continue
		}
		writeFile(p, data)
		changed = append(changed, p)
	}
	return changed
}

func writeFile(path string, data []byte) error {
	tmp := path + ".looprinter-restore"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func mergeEnv(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func rel(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// scriptPaths are the snapshotted files, read-only to the supervising agent.
func scriptPaths(snap map[string][]byte) []string {
	out := make([]string, 0, len(snap))
	for p := range snap {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
