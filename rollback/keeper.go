package rollback

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/safegit"
)

// Marks are what the engine's state keeps for rollback between runs (the
// engine's State embeds them: their JSON names are the state file's).
type Marks struct {
	// Uncommitted names files that differed from the engine's last commit
	// when a gate's checks ran (no checkpoint then): what a stop that
	// cannot roll back names.
	Uncommitted []string `json:"uncommitted,omitempty"`
	// Outside are the files (relative to the loop folder) that were
	// changed or untracked, and not ignored, when a run started, before
	// any agent run of it: the user's (`looprinter run > run.log`). The
	// engine never commits them, never rolls them back, and its
	// checkpoints compare the work tree without them.
	Outside []string `json:"outside,omitempty"`
	// SnapshotErr is why the work tree could not be snapshotted at the
	// last gate (no checkpoint then): what a stop that cannot roll back
	// says.
	SnapshotErr string `json:"snapshot_error,omitempty"`
}

// Keeper keeps the ledger of checkpoints and takes the loop's branch back.
// It owns nothing in memory but its marks: the ledger is in the engine's
// private folder. What it needs of the engine comes in its fields.
type Keeper struct {
	Dir   string // the loop folder
	Priv  string // the engine's private folder
	Name  string // the loop's name: its refs are under RefPrefix(Name)
	Marks *Marks // kept in the engine's state
	Emit  func(record.Event)
	// Aside lists the runner files the agent added (the clean room's
	// set-aside list) on the tree as it is now; nil: none are known.
	Aside func() ([]string, error)
	// Passed are the tasks the engine's plan judged passed, and At the
	// cycle and iteration, for a new checkpoint.
	Passed func() []string
	At     func() (cycle, iteration int)
}

// LastCommit is the engine's own last commit ("" when none).
func (k *Keeper) LastCommit() string {
	data, err := os.ReadFile(loopdir.PrivateOf(k.Dir).LastCommit())
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// NoteCheckpoint records the results of checks that just ran as a
// checkpoint, when the work tree is exactly a commit of the engine's (its
// last commit; at the baseline, before any agent ran, HEAD). Checks on the
// same tree as the last checkpoint are merged into it. room is the clean
// room's verdict on this tree when one ran: a checkpoint is gamed unless a
// clean room passed on it or the tree holds no runner file the agent added.
func (k *Keeper) NoteCheckpoint(results []judge.CheckResult, baseline bool, room *record.CleanRoom) {
	ctx := context.Background()
	commit := k.LastCommit()
	if baseline {
		commit = safegit.Head(ctx, k.Dir)
	}
	if commit == "" {
		return
	}
	tree, err := WorkTreeOf(ctx, k.Dir, commit, k.Marks.Outside)
	if err != nil {
		k.snapshotFailed(err)
		return
	}
	work, err := safegit.SnapshotTreeExcept(ctx, k.Dir, k.Marks.Outside)
	if err != nil {
		k.snapshotFailed(err)
		return
	}
	k.Marks.SnapshotErr = ""
	if work != tree {
		// The checks ran on work that is not (yet) committed. Which files
		// differ is kept: a stop with no checkpoint says why.
		if out, derr := safegit.Line(ctx, k.Dir, "diff", "--name-only", tree, work); derr == nil && out != "" {
			names := strings.Split(out, "\n")
			k.Marks.Uncommitted = names[:min(len(names), 5)]
		}
		return
	}
	k.Marks.Uncommitted = nil
	led := Load(k.Priv)
	checks, tests := map[string]bool{}, map[string]int{}
	gamed := false
	if n := len(led.Checkpoints); n > 0 && led.Checkpoints[n-1].Tree == tree {
		checks = led.Checkpoints[n-1].Checks
		tests = CopyTests(led.Checkpoints[n-1].Tests)
		gamed = led.Checkpoints[n-1].Gamed
		led.Checkpoints = led.Checkpoints[:n-1]
	}
	for _, r := range results {
		checks[r.Command] = r.Pass
		NoteTests(tests, r)
	}
	switch {
	case baseline:
		gamed = false // before any agent ran: nothing of the agent's
	case room != nil && room.Error == "":
		gamed = !room.Pass
	case !gamed && k.Aside != nil:
		aside, err := k.Aside()
		gamed = err != nil || len(aside) > 0
	}
	cycle, iteration := k.At()
	led.Checkpoints = append(led.Checkpoints, Checkpoint{Commit: commit, Tree: tree, Checks: checks, Tests: tests, Tasks: k.Passed(),
		Cycle: cycle, Iteration: iteration, At: time.Now().UTC(), Gamed: gamed})
	if err := led.Save(k.Priv); err != nil {
		k.Emit(record.Event{Event: record.Warning, Message: "cannot save the checkpoint ledger: " + err.Error()})
	}
}

// UndoBroken undoes a build run at once when a check that passed at the
// latest checkpoint fails in results (the gate checks run after it, with
// git.rollback: task): its work goes to a ref, the branch and the files go
// back to the checkpoint, and the returned text says which checks it broke
// (for the next prompt). It returns "" and results when nothing broke (or
// the move back failed: a warning says so), for the checkpoint the run's
// commit makes.
func (k *Keeper) UndoBroken(ctx context.Context, task string, results []judge.CheckResult) (string, []judge.CheckResult) {
	led := Load(k.Priv)
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
	why := fmt.Sprintf("the build run for %s broke %s, which passed at %.12s", task, strings.Join(broken, ", "), last.Commit)
	kept, err := k.MoveBack(ctx, led, last, "task", why)
	if err != nil {
		k.Emit(record.Event{Event: record.Warning, Kind: "rollback", Message: "could not roll back: " + err.Error()})
		return "", results
	}
	msg := fmt.Sprintf("ROLLED BACK: this approach broke %s (it passed before the run for %s). The run's changes were undone; the tree is back at %.12s and the attempt is kept on %s. Try a different approach that keeps %s passing.\n%s",
		strings.Join(broken, ", "), task, last.Commit, kept.Ref, strings.Join(broken, ", "), strings.TrimRight(signal.String(), "\n"))
	return msg, nil
}

// Settled is what a stop's move back to the best state did.
type Settled struct {
	Kept  *KeptRef // the work taken off the branch; nil: the branch did not move
	Tasks []string // the tasks judged passed at the best state (when Kept is set)
	Next  []string // what the stop's report must say the user can do
}

// SettleBest leaves the branch at the best checkpoint when the loop stops
// without DONE (how it stopped, in words: "BUDGET SPENT"); the commits after
// it (and uncommitted work) are kept on refs/looprinter/<loop>/attempt-N.
func (k *Keeper) SettleBest(stopped string) Settled {
	led := Load(k.Priv)
	best, ok := led.Best()
	if !ok {
		return Settled{Next: k.noBest()}
	}
	ctx := context.Background()
	tip := k.LastCommit()
	if tip == "" {
		tip = best.Commit
	}
	work, err := safegit.SnapshotTreeExcept(ctx, k.Dir, k.Marks.Outside)
	if err != nil {
		msg := "the stop cannot go back to the best state: the work tree cannot be snapshotted (" + err.Error() + "); the work is left as it is"
		k.Emit(record.Event{Event: record.Warning, Kind: "rollback_skipped", Message: msg})
		return Settled{Next: []string{msg}}
	}
	tipTree, _ := WorkTreeOf(ctx, k.Dir, tip, k.Marks.Outside)
	if tip == best.Commit && work == tipTree {
		return Settled{} // already at the best state
	}
	if _, err := safegit.Line(ctx, k.Dir, "merge-base", "--is-ancestor", best.Commit, tip); err != nil {
		return Settled{} // not on this line of history (an earlier --fresh start)
	}
	why := fmt.Sprintf("the loop stopped %s; the best state reached is %.12s (%d checks passed)", stopped, best.Commit, best.Score())
	if n := best.PassingTests(); n > 0 {
		why = fmt.Sprintf("the loop stopped %s; the best state reached is %.12s (%d tests, %d checks passed)", stopped, best.Commit, n, best.Score())
	}
	kept, err := k.MoveBack(ctx, led, best, "stop", why)
	if err != nil {
		k.Emit(record.Event{Event: record.Warning, Kind: "rollback", Message: "could not go back to the best state: " + err.Error()})
		return Settled{}
	}
	return Settled{Kept: kept, Tasks: best.Tasks}
}

// noBest says why a stop with no checkpoint to go back to leaves the work
// as it is, when there is a reason the user can act on.
func (k *Keeper) noBest() []string {
	var msg string
	switch {
	case k.Marks.SnapshotErr != "":
		msg = "the stop cannot go back to the best state: the engine could not take its checkpoints (" + k.Marks.SnapshotErr + "); the work is left as it is"
	case len(k.Marks.Uncommitted) > 0:
		msg = fmt.Sprintf("the stop did not go back to the best state: no state the checks judged was ever the committed state, because %s changed outside the engine's commits (a file `looprinter run > FILE` writes, a check's output); list such files in .gitignore and the next stop can roll back",
			strings.Join(k.Marks.Uncommitted, ", "))
	default:
		return nil
	}
	k.Emit(record.Event{Event: record.Warning, Kind: "rollback_skipped", Message: msg})
	return []string{msg}
}

// MoveBack keeps the tip and the work tree on a new ref, then moves the
// branch and the loop's files to the checkpoint. Changes outside the loop
// folder are kept (git reset --keep refuses to lose them).
func (k *Keeper) MoveBack(ctx context.Context, led *Ledger, to Checkpoint, kind, why string) (*KeptRef, error) {
	tip := k.LastCommit()
	if tip == "" {
		tip = to.Commit
	}
	keep, err := k.keepWork(ctx, tip, why)
	if err != nil {
		return nil, err
	}
	ref, err := k.newRef(ctx, led, kind)
	if err != nil {
		return nil, err
	}
	if _, err := safegit.Line(ctx, k.Dir, "update-ref", ref, keep); err != nil {
		return nil, err
	}
	var commits []string
	if out, err := safegit.Line(ctx, k.Dir, "log", "--format=%h %s", to.Commit+".."+keep); err == nil && out != "" {
		commits = strings.Split(out, "\n")
	}
	if err := k.checkout(ctx, to.Commit); err != nil {
		return nil, err
	}
	kr := KeptRef{Ref: ref, Commit: keep, Kind: kind, Why: why, Commits: commits, At: time.Now().UTC()}
	led.Kept = append(led.Kept, kr)
	// Checkpoints after the one gone back to are no longer on the branch.
	for i, c := range led.Checkpoints {
		if c.Commit == to.Commit && c.Tree == to.Tree {
			led.Checkpoints = led.Checkpoints[:i+1]
			break
		}
	}
	if err := led.Save(k.Priv); err != nil {
		return nil, err
	}
	k.Emit(record.Event{Event: record.Rollback, Kind: kind, From: keep, To: to.Commit, Ref: ref, Changes: commits,
		Message: fmt.Sprintf("%s; the branch went back to %.12s and the undone work is kept on %s", why, to.Commit, ref)})
	return &kr, nil
}

// keepWork is the commit that holds the work being undone: the tip, or the
// work tree's uncommitted changes committed on top of it (on the ref only).
func (k *Keeper) keepWork(ctx context.Context, tip, why string) (string, error) {
	work, err := safegit.SnapshotTreeExcept(ctx, k.Dir, k.Marks.Outside)
	if err != nil {
		return "", err
	}
	tipTree, _ := WorkTreeOf(ctx, k.Dir, tip, k.Marks.Outside)
	if work == tipTree {
		return tip, nil
	}
	msg := fmt.Sprintf("looprinter %s: work undone by a rollback\n\n%s", k.Name, why)
	args := []string{"commit-tree", work, "-p", tip, "-m", msg}
	if email, _ := safegit.Line(ctx, k.Dir, "config", "user.email"); email == "" {
		// No identity: git would refuse; the commit is looprinter's.
		args = append([]string{"-c", "user.name=looprinter", "-c", "user.email=looprinter@localhost"}, args...)
	}
	return safegit.Line(ctx, k.Dir, args...)
}

// newRef is the next free ref for undone work: rollback-N for a task's,
// attempt-N for a stop's.
func (k *Keeper) newRef(ctx context.Context, led *Ledger, kind string) (string, error) {
	n := 1
	prefix := "rollback-"
	if kind == "stop" {
		prefix = "attempt-"
	}
	for _, kr := range led.Kept {
		if strings.HasPrefix(kr.Ref, RefPrefix(k.Name)+prefix) {
			n++
		}
	}
	ref := fmt.Sprintf("%s%s%d", RefPrefix(k.Name), prefix, n)
	for {
		if _, err := safegit.Line(ctx, k.Dir, "rev-parse", "--verify", "-q", ref); err != nil {
			return ref, nil
		}
		n++
		ref = fmt.Sprintf("%s%s%d", RefPrefix(k.Name), prefix, n)
	}
}

// checkout takes the loop folder and then the branch back to commit (the
// folder's changes are on the ref already). The records stay as they are,
// and so do the user's files (Marks.Outside).
func (k *Keeper) checkout(ctx context.Context, commit string) error {
	co := []string{"checkout", "-q", "-f", "HEAD", "--", ".", safegit.ExcludeRecords}
	clean := []string{"clean", "-fdq", "-e", loopdir.RecordsDir + "/"}
	top := ""
	if len(k.Marks.Outside) > 0 {
		// git clean's patterns are read from the top of the work tree.
		top, _ = safegit.Line(ctx, k.Dir, "rev-parse", "--show-prefix")
	}
	for _, f := range k.Marks.Outside {
		co = append(co, ":(exclude,literal)"+f)
		clean = append(clean, "-e", "/"+gitignoreEscape(top+f))
	}
	if _, err := safegit.Line(ctx, k.Dir, co...); err != nil {
		return err
	}
	if _, err := safegit.Line(ctx, k.Dir, append(clean, "--", ".")...); err != nil {
		return err
	}
	if err := ResetKeepRecords(ctx, k.Dir, commit); err != nil {
		return err
	}
	return guard.WriteFileAtomic(loopdir.PrivateOf(k.Dir).LastCommit(), []byte(commit+"\n"))
}

// GuardRefs puts back every kept ref that no longer names the commit the
// engine kept on it (an agent moved or deleted it), each a violation.
func (k *Keeper) GuardRefs() {
	led := Load(k.Priv)
	ctx := context.Background()
	for _, kr := range led.Kept {
		cur, _ := safegit.Line(ctx, k.Dir, "rev-parse", "--verify", "-q", kr.Ref)
		if cur == kr.Commit {
			continue
		}
		k.Emit(record.Event{Event: record.Violation, Kind: "ref_moved", Ref: kr.Ref,
			Message: fmt.Sprintf("%s was moved or deleted outside the engine; it was put back to %.12s", kr.Ref, kr.Commit)})
		safegit.Line(ctx, k.Dir, "update-ref", kr.Ref, kr.Commit)
	}
}

// snapshotFailed keeps why the work tree could not be snapshotted at a gate
// (no checkpoint then) and warns the first time since the last snapshot
// that worked: a stop says why it cannot roll back.
func (k *Keeper) snapshotFailed(err error) {
	msg := err.Error()
	if k.Marks.SnapshotErr == "" {
		k.Emit(record.Event{Event: record.Warning, Kind: "checkpoint_failed",
			Message: "no checkpoint of the checks just run: the work tree cannot be snapshotted (" + msg + "); a stop will not be able to go back to the best state"})
	}
	k.Marks.SnapshotErr = msg
}

// NoteOutside finds, when a run starts and before any agent run of it,
// the files of the loop folder that are changed or untracked and not
// ignored (a `looprinter run > run.log` the shell just made, a user's
// edit): they are the user's. It warns about them now; the engine leaves
// them out of its commits and checkpoints, and a move back leaves them as
// they are. They are remembered across runs. touched are what the agent
// runs changed: the loop's work, not the user's, even when a run was cut
// short before the engine committed it.
func (k *Keeper) NoteOutside(ctx context.Context, touched []string) {
	if safegit.Head(ctx, k.Dir) == "" {
		return
	}
	seen := map[string]bool{}
	for _, f := range k.Marks.Outside {
		seen[f] = true
	}
	for _, f := range touched {
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
	if out, err := safegit.Run(ctx, k.Dir, nil, "diff", "-z", "--name-only", "--no-renames", "--relative", "HEAD", "--", "."); err == nil {
		add(out)
	}
	if out, err := safegit.Run(ctx, k.Dir, nil, "ls-files", "-z", "--others", "--exclude-standard", "--", "."); err == nil {
		add(out)
	}
	sort.Strings(found)
	k.Marks.Outside = append(k.Marks.Outside, found...)
	if len(k.Marks.Outside) == 0 {
		return
	}
	names := k.Marks.Outside
	more := ""
	if len(names) > 10 {
		names, more = names[:10], fmt.Sprintf(" and %d more", len(k.Marks.Outside)-10)
	}
	k.Emit(record.Event{Event: record.Warning, Kind: "outside_files", Changes: k.Marks.Outside,
		Message: fmt.Sprintf("%s%s changed outside the loop's work (untracked or uncommitted, and not in .gitignore): the engine leaves them as they are, never commits them and never rolls them back; commit them first if the agent should build on them, or list them in .gitignore",
			strings.Join(names, ", "), more)})
}
