package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/spec"
)

// Checkpoints and rollback. The engine keeps, in its private folder, which
// of its own commits passed which checks: a checkpoint is only ever a commit
// the engine made itself (its last-commit file, never HEAD or a ref an agent
// could move) whose tree is the tree the checks ran on. From that ledger it
// takes the loop's branch back to the best state when the loop stops
// without DONE, and, with git.rollback: task, undoes a build run that broke
// a check that passed before. What it undoes is never lost: it is committed
// (the work tree included) to refs/looprinter/<loop>/…, and the ledger keeps
// the commit each such ref must name, so a moved ref is put back.

// Checkpoint is a commit of the engine's and the checks seen on its tree.
type Checkpoint struct {
	Commit string          `json:"commit"`
	Tree   string          `json:"tree"`
	Checks map[string]bool `json:"checks"` // command → passed
	// Tests are the passing tests each check's runner counted on the
	// tree (command → passed; a check whose output shows no count is not
	// in it): the ratchet's counts, which rank states before Checks.
	Tests     map[string]int `json:"tests,omitempty"`
	Tasks     []string       `json:"tasks,omitempty"` // tasks the engine judged passed at this commit
	Cycle     int            `json:"cycle"`
	Iteration int            `json:"iteration"`
	At        time.Time      `json:"at"`
	// Gamed: the checks passed on a tree that holds runner files the
	// agent added (tests, their support, runner configuration: what the
	// clean room sets aside), and no clean room passed on it: its passes
	// may be the agent's forgery, so it is never a state to go back to.
	Gamed bool `json:"gamed,omitempty"`
}

// Score is the number of checks that passed on the checkpoint's tree.
func (c Checkpoint) Score() int {
	n := 0
	for _, ok := range c.Checks {
		if ok {
			n++
		}
	}
	return n
}

// KeptRef is work the engine took off the branch, kept on a ref.
type KeptRef struct {
	Ref     string    `json:"ref"`
	Commit  string    `json:"commit"`
	Kind    string    `json:"kind"` // task or stop
	Why     string    `json:"why"`
	Commits []string  `json:"commits,omitempty"` // "abc1234 subject", newest first
	At      time.Time `json:"at"`
}

// Ledger is the engine's record of checkpoints and kept refs for one loop.
type Ledger struct {
	Checkpoints []Checkpoint `json:"checkpoints,omitempty"`
	Kept        []KeptRef    `json:"kept,omitempty"`
}

// Best is the checkpoint where the most tests passed (the ratchet's
// counts), then the most checks, the latest of equals; a gamed one (see
// Checkpoint.Gamed) is never chosen.
func (l *Ledger) Best() (Checkpoint, bool) {
	best, ok := Checkpoint{}, false
	for _, c := range l.Checkpoints {
		if c.Gamed {
			continue
		}
		if !ok || !c.worse(best) {
			best, ok = c, true
		}
	}
	return best, ok
}

// LoadLedger reads the engine's ledger of a loop directory (empty when the
// loop never reached a checkpoint).
func LoadLedger(dir string) *Ledger {
	return loadLedger(string(loopdir.PrivateOf(dir)))
}

func loadLedger(priv string) *Ledger {
	l := &Ledger{}
	if data, err := os.ReadFile(loopdir.Private(priv).Checkpoints()); err == nil {
		json.Unmarshal(data, l)
	}
	return l
}

func (l *Ledger) save(priv string) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(loopdir.Private(priv).Checkpoints(), data)
}

// rollback keeps the ledger of checkpoints and takes the loop's branch
// back: after a build run that broke a check (git.rollback: task) and to
// the best state at a stop without DONE. It owns nothing in memory: the
// ledger is in the engine's private folder. What it needs of the engine
// comes in at construction (openEngine).
type rollback struct {
	dir   string // the loop folder
	priv  string // the engine's private folder
	st    *State // the engine's state (Judged, TaskBase, Uncommitted)
	spec  func() *spec.Loop
	emit  func(record.Event)
	judge func() *judge.Judge // the engine's judge: it runs the gate checks
	// aside lists the runner files the agent added (the clean room's
	// set-aside list) on the tree as it is now.
	aside func() ([]string, error)
	// writeJudged writes plan.json from the judged plan (judgedPlan.writeJudged).
	writeJudged  func() error
	noteWriteErr func(error)
}

// RefPrefix is where a loop's undone work is kept.
func RefPrefix(name string) string { return "refs/looprinter/" + name + "/" }

// engineCommits says whether the engine's commits can be checkpoints: a git
// repository, and a loop that commits (the review shape's fixer commits
// itself, so its history is not the engine's).
func (rb *rollback) engineCommits() bool {
	if rb.spec().Shape == spec.ShapeReview || (rb.spec().Git.Commit != nil && !*rb.spec().Git.Commit) {
		return false
	}
	return gitDir(rb.spec()) != ""
}

// lastCommit is the engine's own last commit ("" when none).
func (rb *rollback) lastCommit() string {
	data, err := os.ReadFile(loopdir.PrivateOf(rb.dir).LastCommit())
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// judgedTasks are the tasks of the engine's plan it judged passed.
func (rb *rollback) judgedTasks() []string {
	var out []string
	if rb.st.Judged != nil {
		for _, t := range rb.st.Judged.Tasks {
			if t.Passes {
				out = append(out, t.ID)
			}
		}
	}
	return out
}

// noteCheckpoint records the results of checks that just ran as a
// checkpoint, when the work tree is exactly a commit of the engine's (its
// last commit; at the baseline, before any agent ran, HEAD). Checks on the
// same tree as the last checkpoint are merged into it. room is the clean
// room's verdict on this tree when one ran: a checkpoint is gamed unless a
// clean room passed on it or the tree holds no runner file the agent added.
func (rb *rollback) noteCheckpoint(results []CheckResult, baseline bool, room *record.CleanRoom) {
	if len(results) == 0 || !rb.engineCommits() {
		return
	}
	ctx := context.Background()
	commit := rb.lastCommit()
	if baseline {
		commit = safegit.Head(ctx, rb.dir)
	}
	if commit == "" {
		return
	}
	tree, err := workTreeOf(ctx, rb.dir, commit, rb.st.Outside)
	if err != nil {
		rb.snapshotFailed(err)
		return
	}
	work, err := safegit.SnapshotTreeExcept(ctx, rb.dir, rb.st.Outside)
	if err != nil {
		rb.snapshotFailed(err)
		return
	}
	rb.st.SnapshotErr = ""
	if work != tree {
		// The checks ran on work that is not (yet) committed. Which files
		// differ is kept: a stop with no checkpoint says why.
		{
			if out, derr := safegit.Line(ctx, rb.dir, "diff", "--name-only", tree, work); derr == nil && out != "" {
				names := strings.Split(out, "\n")
				rb.st.Uncommitted = names[:min(len(names), 5)]
			}
		}
		return
	}
	rb.st.Uncommitted = nil
	led := loadLedger(rb.priv)
	checks, tests := map[string]bool{}, map[string]int{}
	gamed := false
	if n := len(led.Checkpoints); n > 0 && led.Checkpoints[n-1].Tree == tree {
		checks = led.Checkpoints[n-1].Checks
		tests = keptTests(led.Checkpoints[n-1].Tests)
		gamed = led.Checkpoints[n-1].Gamed
		led.Checkpoints = led.Checkpoints[:n-1]
	}
	for _, r := range results {
		checks[r.Command] = r.Pass
		noteTests(tests, r)
	}
	switch {
	case baseline:
		gamed = false // before any agent ran: nothing of the agent's
	case room != nil && room.Error == "":
		gamed = !room.Pass
	case !gamed && rb.aside != nil:
		aside, err := rb.aside()
		gamed = err != nil || len(aside) > 0
	}
	led.Checkpoints = append(led.Checkpoints, Checkpoint{Commit: commit, Tree: tree, Checks: checks, Tests: tests, Tasks: rb.judgedTasks(),
		Cycle: rb.st.Cycle, Iteration: rb.st.Iterations, At: time.Now().UTC(), Gamed: gamed})
	if err := led.save(rb.priv); err != nil {
		rb.emit(record.Event{Event: record.Warning, Message: "cannot save the checkpoint ledger: " + err.Error()})
	}
}

// rollbackTask runs the gate checks after a build run when git.rollback is
// task. If a check that passed at the latest checkpoint fails now, the run
// is undone at once: its work goes to a ref, the branch and the files go
// back to the checkpoint, and the returned text says which checks it broke
// (for the next prompt). The results are returned for the checkpoint the
// run's commit makes when nothing broke.
func (rb *rollback) rollbackTask(ctx context.Context, task Task) (string, []CheckResult) {
	if rb.spec().Git.Rollback != "task" || !rb.engineCommits() {
		return "", nil
	}
	cmds := rb.spec().GateChecks()
	if len(cmds) == 0 {
		return "", nil
	}
	results := rb.judge().RunChecks(ctx, "task", cmds)
	if ctx.Err() != nil {
		return "", nil
	}
	rb.emit(record.Event{Event: record.Verify, Gate: "task", Task: task.ID, Pass: record.Bool(judge.AllPass(results)), Checks: judge.ChecksOf(results)})
	led := loadLedger(rb.priv)
	if len(led.Checkpoints) == 0 {
		return "", results
	}
	last := led.Checkpoints[len(led.Checkpoints)-1]
	var broken []string
	var signal strings.Builder
	for _, r := range results {
		if !r.Pass && last.Checks[r.Command] {
			broken = append(broken, "`"+r.Command+"`")
			fmt.Fprintf(&signal, "$ %s   # exit %d\n%s\n", r.Command, r.ExitCode, r.Signal)
		}
	}
	if len(broken) == 0 {
		return "", results
	}
	why := fmt.Sprintf("the build run for %s broke %s, which passed at %.12s", task.ID, strings.Join(broken, ", "), last.Commit)
	kept, err := rb.rollbackTo(ctx, led, last, "task", why)
	if err != nil {
		rb.emit(record.Event{Event: record.Warning, Kind: "rollback", Message: "could not roll back: " + err.Error()})
		return "", results
	}
	msg := fmt.Sprintf("ROLLED BACK: this approach broke %s (it passed before the run for %s). The run's changes were undone; the tree is back at %.12s and the attempt is kept on %s. Try a different approach that keeps %s passing.\n%s",
		strings.Join(broken, ", "), task.ID, last.Commit, kept.Ref, strings.Join(broken, ", "), strings.TrimRight(signal.String(), "\n"))
	return msg, nil
}

// settleBest leaves the branch at the best checkpoint when the loop stops
// without DONE; the commits after it (and uncommitted work) are kept on
// refs/looprinter/<loop>/attempt-N. It returns what was kept, or nil.
func (rb *rollback) settleBest(o *Outcome) *KeptRef {
	switch o.Reason {
	case ReasonBudget, ReasonNoProgress, ReasonTimeCost, ReasonBlocked:
	default:
		return nil
	}
	if !rb.engineCommits() {
		return nil
	}
	led := loadLedger(rb.priv)
	best, ok := led.Best()
	if !ok {
		if rb.st.SnapshotErr != "" {
			msg := "the stop cannot go back to the best state: the engine could not take its checkpoints (" + rb.st.SnapshotErr + "); the work is left as it is"
			rb.emit(record.Event{Event: record.Warning, Kind: "rollback_skipped", Message: msg})
			o.Next = append(o.Next, msg)
			return nil
		}
		if len(rb.st.Uncommitted) > 0 {
			msg := fmt.Sprintf("the stop did not go back to the best state: no state the checks judged was ever the committed state, because %s changed outside the engine's commits (a file `looprinter run > FILE` writes, a check's output); list such files in .gitignore and the next stop can roll back",
				strings.Join(rb.st.Uncommitted, ", "))
			rb.emit(record.Event{Event: record.Warning, Kind: "rollback_skipped", Message: msg})
			o.Next = append(o.Next, msg)
		}
		return nil
	}
	ctx := context.Background()
	tip := rb.lastCommit()
	if tip == "" {
		tip = best.Commit
	}
	work, err := safegit.SnapshotTreeExcept(ctx, rb.dir, rb.st.Outside)
	if err != nil {
		msg := "the stop cannot go back to the best state: the work tree cannot be snapshotted (" + err.Error() + "); the work is left as it is"
		rb.emit(record.Event{Event: record.Warning, Kind: "rollback_skipped", Message: msg})
		o.Next = append(o.Next, msg)
		return nil
	}
	tipTree, _ := workTreeOf(ctx, rb.dir, tip, rb.st.Outside)
	if tip == best.Commit && work == tipTree {
		return nil // already at the best state
	}
	if _, err := safegit.Line(ctx, rb.dir, "merge-base", "--is-ancestor", best.Commit, tip); err != nil {
		return nil // not on this line of history (an earlier --fresh start)
	}
	why := fmt.Sprintf("the loop stopped %s; the best state reached is %.12s (%d checks passed)", Title(o.Reason), best.Commit, best.Score())
	if n := best.PassingTests(); n > 0 {
		why = fmt.Sprintf("the loop stopped %s; the best state reached is %.12s (%d tests, %d checks passed)", Title(o.Reason), best.Commit, n, best.Score())
	}
	kept, err := rb.rollbackTo(ctx, led, best, "stop", why)
	if err != nil {
		rb.emit(record.Event{Event: record.Warning, Kind: "rollback", Message: "could not go back to the best state: " + err.Error()})
		return nil
	}
	// The plan the engine judged goes back with the files.
	if rb.st.Judged != nil {
		at := map[string]bool{}
		for _, id := range best.Tasks {
			at[id] = true
		}
		for i := range rb.st.Judged.Tasks {
			t := &rb.st.Judged.Tasks[i]
			if t.Passes && !at[t.ID] {
				t.Passes = false
				delete(rb.st.TaskBase, t.ID)
			}
		}
		rb.noteWriteErr(rb.writeJudged())
	}
	return kept
}

// rollbackTo keeps the tip and the work tree on a new ref, then moves the
// branch and the loop's files to the checkpoint. Changes outside the loop
// folder are kept (git reset --keep refuses to lose them).
func (rb *rollback) rollbackTo(ctx context.Context, led *Ledger, to Checkpoint, kind, why string) (*KeptRef, error) {
	tip := rb.lastCommit()
	if tip == "" {
		tip = to.Commit
	}
	work, err := safegit.SnapshotTreeExcept(ctx, rb.dir, rb.st.Outside)
	if err != nil {
		return nil, err
	}
	keep := tip
	tipTree, _ := workTreeOf(ctx, rb.dir, tip, rb.st.Outside)
	if work != tipTree {
		// Uncommitted work of the run: committed on top of the tip, on the ref only.
		msg := fmt.Sprintf("looprinter %s: work undone by a rollback\n\n%s", rb.spec().Name, why)
		args := []string{"commit-tree", work, "-p", tip, "-m", msg}
		if email, _ := safegit.Line(ctx, rb.dir, "config", "user.email"); email == "" {
			// No identity: git would refuse; the commit is looprinter's.
			args = append([]string{"-c", "user.name=looprinter", "-c", "user.email=looprinter@localhost"}, args...)
		}
		keep, err = safegit.Line(ctx, rb.dir, args...)
		if err != nil {
			return nil, err
		}
	}
	n := 1
	prefix := "rollback-"
	if kind == "stop" {
		prefix = "attempt-"
	}
	for _, k := range led.Kept {
		if strings.HasPrefix(k.Ref, RefPrefix(rb.spec().Name)+prefix) {
			n++
		}
	}
	ref := fmt.Sprintf("%s%s%d", RefPrefix(rb.spec().Name), prefix, n)
	for {
		if _, err := safegit.Line(ctx, rb.dir, "rev-parse", "--verify", "-q", ref); err != nil {
			break
		}
		n++
		ref = fmt.Sprintf("%s%s%d", RefPrefix(rb.spec().Name), prefix, n)
	}
	if _, err := safegit.Line(ctx, rb.dir, "update-ref", ref, keep); err != nil {
		return nil, err
	}
	var commits []string
	if out, err := safegit.Line(ctx, rb.dir, "log", "--format=%h %s", to.Commit+".."+keep); err == nil && out != "" {
		commits = strings.Split(out, "\n")
	}
	// Back to the checkpoint: the loop folder first (its changes are on
	// the ref), then the branch. The records stay as they are, and so do
	// the user's files (State.Outside).
	co := []string{"checkout", "-q", "-f", "HEAD", "--", ".", safegit.ExcludeRecords}
	clean := []string{"clean", "-fdq", "-e", loopdir.RecordsDir + "/"}
	top := ""
	if len(rb.st.Outside) > 0 {
		// git clean's patterns are read from the top of the work tree.
		top, _ = safegit.Line(ctx, rb.dir, "rev-parse", "--show-prefix")
	}
	for _, f := range rb.st.Outside {
		co = append(co, ":(exclude,literal)"+f)
		clean = append(clean, "-e", "/"+gitignoreEscape(top+f))
	}
	if _, err := safegit.Line(ctx, rb.dir, co...); err != nil {
		return nil, err
	}
	if _, err := safegit.Line(ctx, rb.dir, append(clean, "--", ".")...); err != nil {
		return nil, err
	}
	if err := resetKeepRecords(ctx, rb.dir, to.Commit); err != nil {
		return nil, err
	}
	if err := WriteFileAtomic(loopdir.PrivateOf(rb.dir).LastCommit(), []byte(to.Commit+"\n")); err != nil {
		return nil, err
	}
	k := KeptRef{Ref: ref, Commit: keep, Kind: kind, Why: why, Commits: commits, At: time.Now().UTC()}
	led.Kept = append(led.Kept, k)
	// Checkpoints after the one gone back to are no longer on the branch.
	for i, c := range led.Checkpoints {
		if c.Commit == to.Commit && c.Tree == to.Tree {
			led.Checkpoints = led.Checkpoints[:i+1]
			break
		}
	}
	if err := led.save(rb.priv); err != nil {
		return nil, err
	}
	rb.emit(record.Event{Event: record.Rollback, Kind: kind, From: keep, To: to.Commit, Ref: ref, Changes: commits,
		Message: fmt.Sprintf("%s; the branch went back to %.12s and the undone work is kept on %s", why, to.Commit, ref)})
	return &k, nil
}

// guardRefs puts back every kept ref that no longer names the commit the
// engine kept on it (an agent moved or deleted it), each a violation.
func (rb *rollback) guardRefs() {
	if !rb.engineCommits() {
		return
	}
	led := loadLedger(rb.priv)
	ctx := context.Background()
	for _, k := range led.Kept {
		cur, _ := safegit.Line(ctx, rb.dir, "rev-parse", "--verify", "-q", k.Ref)
		if cur == k.Commit {
			continue
		}
		rb.emit(record.Event{Event: record.Violation, Kind: "ref_moved", Ref: k.Ref,
			Message: fmt.Sprintf("%s was moved or deleted outside the engine; it was put back to %.12s", k.Ref, k.Commit)})
		safegit.Line(ctx, rb.dir, "update-ref", k.Ref, k.Commit)
	}
}

// KeptLines lists the kept refs for the final report, newest last.
func KeptLines(kept []KeptRef) []string {
	var out []string
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].At.Before(kept[j].At) })
	for _, k := range kept {
		line := fmt.Sprintf("%s (%.12s): %s", k.Ref, k.Commit, k.Why)
		if len(k.Commits) > 0 {
			line += "; commits: " + strings.Join(k.Commits, "; ")
		}
		out = append(out, line)
	}
	return out
}

// workTreeOf is the tree of commit as snapshotTree sees a work tree: without
// the loop's records and the files in except (State.Outside). Records are committed where the branch carries them (a
// fleet loop's, or a user's by mistake); the engine's own commits keep
// them as they were at HEAD.
func workTreeOf(ctx context.Context, dir, commit string, except []string) (string, error) {
	tree, err := safegit.Line(ctx, dir, "rev-parse", "--verify", "-q", commit+"^{tree}")
	if err != nil {
		return "", err
	}
	names := append([]string{"--literal-pathspecs", "ls-tree", "-r", "--name-only", commit, "--", loopdir.RecordsDir}, except...)
	if out, _ := safegit.Line(ctx, dir, names...); out == "" {
		return tree, nil
	}
	idx, err := os.CreateTemp(string(loopdir.PrivateOf(dir)), ".tree-index-*")
	if err != nil {
		return "", err
	}
	idx.Close()
	defer os.Remove(idx.Name())
	env := []string{"GIT_INDEX_FILE=" + idx.Name()}
	if _, err := safegit.Run(ctx, dir, env, "read-tree", commit); err != nil {
		return "", err
	}
	// -f: the index is this function's own, read from commit. Without it
	// git refuses an entry that differs from both HEAD and the file, which
	// is every record of a commit older than HEAD where the branch carries
	// the records (a fleet's task commit under the steps' commits): no
	// checkpoint would ever be taken there.
	if _, err := safegit.Run(ctx, dir, env, append([]string{"--literal-pathspecs", "rm", "-r", "-q", "--cached", "-f", "--ignore-unmatch", "--", loopdir.RecordsDir}, except...)...); err != nil {
		return "", err
	}
	out, err := safegit.Run(ctx, dir, env, "write-tree")
	return strings.TrimSpace(out), err
}

// resetKeepRecords moves the branch to commit as `git reset --keep` does
// (changes outside the loop folder are kept), and leaves the loop's records
// as they are even where git tracks them: they are moved aside, their
// tracked files restored for the reset, and moved back. The record file
// being written stays open through the moves.
func resetKeepRecords(ctx context.Context, dir, commit string) error {
	if out, _ := safegit.Line(ctx, dir, "ls-files", "--", loopdir.RecordsDir); out == "" {
		_, err := safegit.Line(ctx, dir, "reset", "-q", "--keep", commit)
		return err
	}
	recs := loopdir.Dir(dir).Records()
	aside := loopdir.Dir(dir).RecordsAside()
	os.RemoveAll(aside)
	if err := os.Rename(recs, aside); err != nil {
		return err
	}
	back := func() error {
		if err := os.RemoveAll(recs); err != nil {
			return err
		}
		return os.Rename(aside, recs)
	}
	if _, err := safegit.Line(ctx, dir, "checkout", "-q", "HEAD", "--", loopdir.RecordsDir); err != nil {
		back()
		return err
	}
	if _, err := safegit.Line(ctx, dir, "reset", "-q", "--keep", commit); err != nil {
		back()
		return err
	}
	return back()
}

// snapshotFailed keeps why the work tree could not be snapshotted at a gate
// (no checkpoint then) and warns the first time since the last snapshot
// that worked: a stop says why it cannot roll back.
func (rb *rollback) snapshotFailed(err error) {
	msg := err.Error()
	if rb.st.SnapshotErr == "" {
		rb.emit(record.Event{Event: record.Warning, Kind: "checkpoint_failed",
			Message: "no checkpoint of the checks just run: the work tree cannot be snapshotted (" + msg + "); a stop will not be able to go back to the best state"})
	}
	rb.st.SnapshotErr = msg
}

// gitignoreEscape quotes a path for a gitignore pattern (git clean -e).
func gitignoreEscape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`\*?[]!# `, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// noteOutside finds, when a run starts and before any agent run of it,
// the files of the loop folder that are changed or untracked and not
// ignored (a `looprinter run > run.log` the shell just made, a user's
// edit): they are the user's. The engine warns about them now, leaves
// them out of its commits and checkpoints, and a rollback leaves them as
// they are. They are remembered across runs.
func (rb *rollback) noteOutside(ctx context.Context) {
	if !rb.engineCommits() || safegit.Head(ctx, rb.dir) == "" {
		return
	}
	seen := map[string]bool{}
	for _, f := range rb.st.Outside {
		seen[f] = true
	}
	// What the agent runs changed is the loop's work, not the user's,
	// even when a run was cut short before the engine committed it.
	for _, f := range rb.st.Touched {
		seen[f] = true
	}
	var found []string
	add := func(out string) {
		for _, f := range strings.Split(out, "\x00") {
			if first, _, _ := strings.Cut(f, "/"); f == "" || first == loopdir.RecordsDir || first == loopdir.OutputDir || first == ".." {
				continue
			}
			if !seen[f] {
				seen[f] = true
				found = append(found, f)
			}
		}
	}
	if out, err := safegit.Run(ctx, rb.dir, nil, "diff", "-z", "--name-only", "--no-renames", "--relative", "HEAD", "--", "."); err == nil {
		add(out)
	}
	if out, err := safegit.Run(ctx, rb.dir, nil, "ls-files", "-z", "--others", "--exclude-standard", "--", "."); err == nil {
		add(out)
	}
	sort.Strings(found)
	rb.st.Outside = append(rb.st.Outside, found...)
	if len(rb.st.Outside) == 0 {
		return
	}
	names := rb.st.Outside
	more := ""
	if len(names) > 10 {
		names, more = names[:10], fmt.Sprintf(" and %d more", len(rb.st.Outside)-10)
	}
	rb.emit(record.Event{Event: record.Warning, Kind: "outside_files", Changes: rb.st.Outside,
		Message: fmt.Sprintf("%s%s changed outside the loop's work (untracked or uncommitted, and not in .gitignore): the engine leaves them as they are, never commits them and never rolls them back; commit them first if the agent should build on them, or list them in .gitignore",
			strings.Join(names, ", "), more)})
}
