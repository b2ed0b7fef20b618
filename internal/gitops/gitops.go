// Package gitops puts a loop's work into git: a commit after each task that
// passed and after each gate, the loop's own branch, a worktree per loop so
// several loops work on one repository at once, cleanup of finished
// worktrees, and a push only when the loop file asks for it.
//
// A git failure is never a success: the commit hook returns an error, the
// engine records it and stops the loop BLOCKED.
package gitops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// Git runs git in dir and returns its trimmed output; the error carries
// git's own message.
func Git(dir string, args ...string) (string, error) {
	out, err := gitIn(dir, "", args...)
	return strings.TrimSpace(out), err
}

// gitIn is Git with stdin, its output untrimmed. A command refused because
// another git process holds the index (index.lock: an editor refreshing
// its status, the committer's own update of the index) is run again, for
// up to indexWait.
func gitIn(dir, stdin string, args ...string) (string, error) {
	deadline := time.Now().Add(indexWait)
	for {
		out, msg, err := gitOnce(dir, stdin, args)
		if err == nil {
			return out, nil
		}
		if !safegit.IndexBusy(msg) || time.Now().After(deadline) {
			if msg == "" {
				msg = strings.TrimSpace(out)
			}
			return out, fmt.Errorf("git %s: %v: %s", subcommand(args), err, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// indexWait bounds the wait for another git process's index.lock.
const indexWait = 10 * time.Second

func gitOnce(dir, stdin string, args []string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", safegit.Args(args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return "", "", err
	}
	// Spared by the engine's sweep of leftover processes after an agent
	// run (the index update of a commit runs beside one): a git killed
	// there would leave index.lock behind.
	release := sandbox.Spare(cmd.Process.Pid)
	err := cmd.Wait()
	release()
	return out.String(), strings.TrimSpace(errb.String()), err
}

// TopLevel returns the root of the work tree holding dir, or "" outside git.
func TopLevel(dir string) string {
	out, err := Git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return ""
	}
	return out
}

// IsLinkedWorktree says whether dir is in a linked worktree (not the
// repository's main work tree).
func IsLinkedWorktree(dir string) bool {
	gd, err1 := Git(dir, "rev-parse", "--absolute-git-dir")
	cd, err2 := Git(dir, "rev-parse", "--git-common-dir")
	if err1 != nil || err2 != nil {
		return false
	}
	if !filepath.IsAbs(cd) {
		cd = filepath.Join(dir, cd)
	}
	a, _ := filepath.EvalSymlinks(gd)
	b, _ := filepath.EvalSymlinks(cd)
	return a != b
}

// CommitEnabled says whether a loop commits its work: git.commit, default
// true inside a git repository.
func CommitEnabled(l *spec.Loop) bool {
	return l.Git.Commit == nil || *l.Git.Commit
}

// DefaultBranch is the branch a worktree loop works on without git.branch.
func DefaultBranch(l *spec.Loop) string {
	if l.Git.Branch != "" {
		return l.Git.Branch
	}
	return "looprinter/" + l.Name
}

// CurrentBranch returns the checked-out branch, or "" when detached.
func CurrentBranch(dir string) string {
	out, err := Git(dir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return ""
	}
	return out
}

// CheckoutBranch puts dir's work tree on branch, creating it from HEAD when
// it does not exist.
func CheckoutBranch(dir, branch string) error {
	if CurrentBranch(dir) == branch {
		return nil
	}
	if _, err := Git(dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		_, err := Git(dir, "checkout", branch)
		return err
	}
	_, err := Git(dir, "checkout", "-b", branch)
	return err
}

// Committer commits a loop's work as its records are written.
type Committer struct {
	Dir    string // where the loop runs
	Name   string // the loop's name, in every message
	Push   bool
	Remote string
	ident  []string
	// pending are the paths (relative to Dir) the agent runs changed since
	// the last commit, from their agent_end records: the next commit
	// stages exactly those. scanned is set once a commit staged the whole
	// folder: the first commit of an engine does (what changed before it
	// started is not in its records), and so does one after a rollback or
	// after more than maxPending paths.
	pending map[string]bool
	scanned bool
	preRun  string // HEAD when the agent run under way started
	// agentsCommit: in a review the fixer commits its fixes; its commits
	// are the work.
	agentsCommit bool
	// byName says whether commits may edit HEAD's tree by name (see
	// treeByName), once known; prefix is Dir's path in the repository.
	byName *bool
	prefix string
	// layered: agent runs write a copy-on-write layer, never .git.
	layered bool
	// indexUpdate is the update of the index a commit by name started in
	// the background (see treeByName and settle).
	indexUpdate chan error
	// outside are the user's files (the engine's outside_files warning at
	// the start of a run): never committed.
	outside map[string]bool
	// gateCommits: git.gate_commits, a commit after every gate even when
	// nothing changed. Without it a gate commits only work not committed
	// yet, and its verdict goes in a note (refs/notes/looprinter) on the
	// commit it judged.
	gateCommits bool
}

// maxPending is the most changed paths a commit stages by name; past it,
// it stages the whole folder.
const maxPending = 5000

// NewCommitter returns the committer for a loop, or nil when the loop does
// not commit (git.commit: false, or not in a git repository).
func NewCommitter(l *spec.Loop) *Committer {
	if !CommitEnabled(l) || TopLevel(l.Dir) == "" {
		return nil
	}
	c := &Committer{Dir: l.Dir, Name: l.Name, Push: l.Git.Push, Remote: l.Git.Remote, agentsCommit: l.Shape == spec.ShapeReview, gateCommits: l.Git.GateCommits}
	// Under bubblewrap with copy-on-write layers an agent's writes to .git
	// stay in its layer and are discarded: no run can move HEAD, and the
	// look at HEAD around each run (two git processes) is not needed.
	if kind, err := sandbox.Resolve(l.Sandbox); err == nil && kind == sandbox.Bwrap && sandbox.LayerProbe() == nil {
		c.layered = true
	}
	if c.Remote == "" {
		c.Remote = "origin"
	}
	// Without an identity git refuses to commit; the loop still commits,
	// as "looprinter", rather than stop on a missing setting.
	if out, _ := Git(l.Dir, "config", "user.email"); out == "" {
		c.ident = []string{"-c", "user.name=looprinter", "-c", "user.email=looprinter@localhost"}
	}
	return c
}

// Hook is the engine hook: a commit after each passed task and each gate.
func (c *Committer) Hook() loop.Hook {
	return func(ev record.Event, emit func(record.Event)) error {
		c.note(ev)
		if ev.Event != record.AgentStart && ev.Event != record.ToolCall {
			// The last commit's update of the index is over before anything
			// else: an agent run is what it overlaps with.
			c.settle()
		}
		switch ev.Event {
		case record.AgentStart:
			if !c.agentsCommit && !c.layered {
				c.preRun, _ = Git(c.Dir, "rev-parse", "--verify", "--quiet", "HEAD")
			}
		case record.AgentEnd:
			if dropped := c.dropAgentCommits(); dropped != "" {
				emit(record.Event{Event: record.Warning, Phase: ev.Phase, Task: ev.Task, Kind: "agent_commits_discarded", Message: "the " + ev.Phase + " run committed on the loop's branch itself (" + dropped +
					"); the engine alone commits: those commits were taken off the branch, and the files they held are committed by the engine as the run's work"})
			}
		}
		subject, body, ok := c.message(ev)
		if !ok {
			return nil
		}
		rec := record.Event{Event: record.Commit, Task: ev.Task, Gate: ev.Gate}
		c.settle()
		head, branch := c.headAndBranch()
		if why := c.historyRewritten(head); why != "" {
			emit(record.Event{Event: record.Violation, Kind: "history_rewritten", Message: why})
			return fmt.Errorf("git: %s; the loop's work cannot be trusted to be the work it judged", why)
		}
		tree, err := c.stage(head)
		if err == nil && ev.Event == record.Verify && !c.gateCommits && head != "" {
			// A gate's verdict is no reason for a commit of its own: an
			// empty one is not made (the verdict goes in a note on the
			// commit it judged); work not committed yet still is.
			if headTree, terr := Git(c.Dir, "rev-parse", "--verify", "--quiet", head+"^{tree}"); terr == nil && headTree == tree {
				c.noteVerdict(head, subject, body)
				// The engine's last commit is head (a loop's first gate
				// may judge a commit it never made).
				if data, rerr := os.ReadFile(c.lastCommitPath()); rerr != nil || strings.TrimSpace(string(data)) == "" {
					loop.WriteFileAtomic(c.lastCommitPath(), []byte(head+"\n"))
				}
				return nil
			}
		}
		hash := ""
		if err == nil {
			hash, err = c.commitTree(head, tree, subject, body)
		}
		if err == nil && c.Push {
			rec.Kind = "push"
			err = c.PushBranch()
		}
		if err != nil {
			rec.Pass, rec.Error = record.Bool(false), err.Error()
			rec.Message = "commit failed: " + subject
			emit(rec)
			return fmt.Errorf("git: %s: %w", subject, err)
		}
		rec.Pass, rec.Message, rec.To = record.Bool(true), hash+" "+subject, branch
		emit(rec)
		return nil
	}
}

func (c *Committer) message(ev record.Event) (subject, body string, ok bool) {
	prefix := "looprinter " + c.Name + ": "
	switch {
	case ev.Event == record.TaskPassed:
		// The engine judged the build run done (the task marked, its
		// target changed); the gates judge the work later. The subject
		// says what the checks said when they ran after the run
		// (git.rollback: task), never "passed" before any check did.
		verdict := "built, gates not run yet"
		if n := len(ev.Checks); n > 0 {
			ok := 0
			for _, ch := range ev.Checks {
				if ch.Pass {
					ok++
				}
			}
			verdict = fmt.Sprintf("built, %d of %d checks pass", ok, n)
			if ok == n {
				verdict = "built, checks PASS"
			}
		}
		subject = prefix + ev.Task + " " + verdict
		if ev.Message != "" {
			subject += " — " + ev.Message
		}
		body = fmt.Sprintf("Build run %d of cycle %d marked %s done and changed its target.", ev.Iteration, ev.Cycle, ev.Task)
		if ev.File != "" {
			body += "\nTarget: " + ev.File
		}
		if len(ev.Checks) > 0 {
			body += "\n\nChecks after the run:\n" + checkLines(ev.Checks)
		} else {
			body += "\n\nThe gates had not run on it: their verdict is in the records (and in a note, git log --notes=looprinter)."
		}
		return subject, strings.TrimSpace(body), true
	case ev.Event == record.PostPhaseEnd:
		// A post phase's work (docs, a changelog) is the loop's work too:
		// committed, so that it lands.
		result := "done"
		if ev.Pass == nil || !*ev.Pass {
			result = "ended without its done signal"
		}
		return fmt.Sprintf("%spost phase %s %s", prefix, ev.Phase, result), ev.Message, true
	case ev.Event == record.Verify && (ev.Gate == "cycle" || ev.Gate == "objective" || ev.Gate == "verify"):
		result := "FAIL"
		if ev.Pass != nil && *ev.Pass {
			result = "PASS"
			if ev.Message == "pass-through" {
				result = "NOT VERIFIED (no objective checks)"
			}
		}
		gate := ev.Gate + " gate"
		if ev.Gate == "verify" {
			gate = "verify checks"
		}
		subject = fmt.Sprintf("%scycle %d %s %s", prefix, ev.Cycle, gate, result)
		if ev.Gate == "verify" {
			subject = fmt.Sprintf("%sattempt %d %s %s", prefix, ev.Iteration, gate, result)
		}
		var b strings.Builder
		b.WriteString(checkLines(ev.Checks))
		for _, e := range ev.Errors {
			fmt.Fprintf(&b, "%s\n", e)
		}
		return subject, strings.TrimSpace(b.String()), true
	}
	return "", "", false
}

// checkLines is one line per check: its command and its result.
func checkLines(checks []record.Check) string {
	var b strings.Builder
	for _, ch := range checks {
		mark := "pass"
		if !ch.Pass {
			mark = fmt.Sprintf("FAIL (exit %d)", ch.ExitCode)
		}
		fmt.Fprintf(&b, "%s: %s\n", ch.Command, mark)
	}
	return b.String()
}

// note keeps what an agent run changed for the next commit.
func (c *Committer) note(ev record.Event) {
	switch ev.Event {
	case record.Warning:
		if ev.Kind == "outside_files" {
			c.outside = map[string]bool{}
			for _, f := range ev.Changes {
				c.outside[f] = true
			}
		}
	case record.AgentEnd:
		if c.pending == nil {
			c.pending = map[string]bool{}
		}
		for _, f := range ev.FilesChanged {
			if len(c.pending) > maxPending {
				c.scanned = false // too many to name: the next commit stages the folder
				return
			}
			c.pending[f] = true
		}
	case record.Rollback:
		c.scanned = false // files went back to another state: stage the folder
	}
}

// Commit stages the loop directory's changes (not working-records/, and
// what .gitignore excludes) and commits them, empty if nothing changed so
// every task and gate is in the history. It returns the short hash. It
// stages the paths the agent runs changed, by name; the whole folder only
// on its first commit and when it cannot name them. It commits with git's
// plumbing (write-tree, commit-tree, update-ref): nothing rescans the
// checkout, whatever its size.
func (c *Committer) Commit(subject, body string) (string, error) {
	c.settle()
	head, _ := c.headAndBranch()
	return c.commitOn(head, subject, body)
}

// commitOn commits the loop's changes on parent, HEAD as just read.
func (c *Committer) commitOn(parent, subject, body string) (string, error) {
	tree, err := c.stage(parent)
	if err != nil {
		return "", err
	}
	return c.commitTree(parent, tree, subject, body)
}

// headAndBranch reads HEAD's commit ("" before the first) and the branch
// it is on ("" when detached), with one git process.
func (c *Committer) headAndBranch() (head, branch string) {
	out, err := Git(c.Dir, "rev-parse", "HEAD", "--abbrev-ref", "HEAD")
	if err != nil {
		return "", CurrentBranch(c.Dir)
	}
	head, branch, _ = strings.Cut(out, "\n")
	if branch == "HEAD" {
		branch = "" // detached
	}
	return strings.TrimSpace(head), strings.TrimSpace(branch)
}

// stage is the tree of the loop's changes on parent, HEAD as just read.
func (c *Committer) stage(parent string) (string, error) {
	tree := ""
	if !c.scanned {
		if err := c.scan(); err != nil {
			return "", err
		}
	} else {
		paths := c.namedPaths()
		t, err := c.treeByName(parent, paths)
		if err == nil {
			tree = t
		} else if err := c.addNamed(paths); err != nil {
			return "", err
		}
	}
	if tree == "" {
		t, err := Git(c.Dir, "write-tree")
		if err != nil {
			return "", err
		}
		tree = t
	}
	return tree, nil
}

// commitTree commits tree on parent and moves HEAD to it.
func (c *Committer) commitTree(parent, tree, subject, body string) (string, error) {
	msg := subject
	if body != "" {
		msg += "\n\n" + body
	}
	args := append(append([]string{}, c.ident...), "commit-tree", tree, "-m", msg)
	if parent != "" {
		args = append(args, "-p", parent)
	}
	full, err := Git(c.Dir, args...)
	if err != nil {
		return "", err
	}
	upd := []string{"update-ref", "-m", "looprinter: " + subject, "HEAD", full}
	if parent != "" {
		upd = append(upd, parent) // only if nothing moved HEAD meanwhile
	}
	if _, err := Git(c.Dir, upd...); err != nil {
		return "", err
	}
	loop.WriteFileAtomic(c.lastCommitPath(), []byte(full+"\n"))
	// The short form git's own --short would print at least (no process
	// for it: a commit's cost is the number of git processes it starts).
	if len(full) > 7 {
		return full[:7], nil
	}
	return full, nil
}

// scan stages the whole folder (the records left out).
func (c *Committer) scan() error {
	if _, err := Git(c.Dir, "add", "-A", "--", "."); err != nil {
		return err
	}
	// The records are the loop's own bookkeeping, never part of its work,
	// and the user's files (outside) are the user's.
	out := []string{loopdir.RecordsDir}
	for f := range c.outside {
		out = append(out, f)
	}
	if _, err := Git(c.Dir, "rev-parse", "--verify", "--quiet", "HEAD"); err == nil {
		Git(c.Dir, append([]string{"--literal-pathspecs", "reset", "-q", "--"}, out...)...)
	} else {
		Git(c.Dir, append([]string{"--literal-pathspecs", "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--"}, out...)...)
	}
	c.scanned, c.pending = true, nil
	return nil
}

// namedPaths are the paths the agent runs changed that the next commit
// takes: not the records, not ignored files, a removed one only if git
// tracked it.
func (c *Committer) namedPaths() []string {
	var paths []string
	for p := range c.pending {
		if first, _, _ := strings.Cut(p, "/"); first == loopdir.RecordsDir || p == "" || strings.HasPrefix(p, "../") || c.outside[p] {
			continue
		}
		paths = append(paths, p)
	}
	c.pending = nil
	sort.Strings(paths)
	return paths
}

// addNamed stages the named paths in the index: those that exist, and
// those removed that git tracked (naming another is an error to git add).
func (c *Committer) addNamed(paths []string) error {
	var present, gone []string
	for _, p := range paths {
		if _, err := os.Lstat(filepath.Join(c.Dir, filepath.FromSlash(p))); err == nil {
			present = append(present, p)
		} else {
			gone = append(gone, p)
		}
	}
	paths = nil
	if len(present) > 0 {
		// Ignored files are not the loop's to commit (naming one is an
		// error to git add).
		ignored := map[string]bool{}
		out, _ := gitIn(c.Dir, strings.Join(present, "\x00"), "check-ignore", "-z", "--stdin")
		for _, p := range strings.Split(out, "\x00") {
			ignored[p] = true
		}
		for _, p := range present {
			if !ignored[p] {
				paths = append(paths, p)
			}
		}
	}
	if len(gone) > 0 {
		out, _ := Git(c.Dir, append([]string{"--literal-pathspecs", "ls-files", "-z", "--"}, gone...)...)
		for _, p := range strings.Split(out, "\x00") {
			if p != "" {
				paths = append(paths, p)
			}
		}
	}
	if len(paths) == 0 {
		return nil
	}
	_, err := gitIn(c.Dir, strings.Join(paths, "\x00"), "--literal-pathspecs", "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul")
	return err
}

// lastCommitPath keeps the engine's last commit, in its private folder.
func (c *Committer) lastCommitPath() string { return loopdir.PrivateOf(c.Dir).LastCommit() }

// historyRewritten says why the history no longer holds the engine's last
// commit ("" when it does): an agent reset, rebased or amended it.
func (c *Committer) historyRewritten(head string) string {
	data, err := os.ReadFile(c.lastCommitPath())
	last := strings.TrimSpace(string(data))
	if err != nil || last == "" || last == head {
		return ""
	}
	if _, err := Git(c.Dir, "merge-base", "--is-ancestor", last, "HEAD"); err != nil {
		return fmt.Sprintf("history rewritten: the engine's last commit %.12s is no longer an ancestor of HEAD", last)
	}
	return ""
}

// dropAgentCommits takes the commits an agent run made on top of the head
// it started on off the branch (the files stay, staged): the engine's
// history holds only its own commits (and its fleet's). It returns the
// commits taken off ("" when none). A head the run moved elsewhere is for
// historyRewritten to judge.
func (c *Committer) dropAgentCommits() string {
	before := c.preRun
	c.preRun = ""
	if before == "" {
		return ""
	}
	head, err := Git(c.Dir, "rev-parse", "--verify", "--quiet", "HEAD")
	if err != nil || head == before {
		return ""
	}
	if _, err := Git(c.Dir, "merge-base", "--is-ancestor", before, head); err != nil {
		return ""
	}
	log, _ := Git(c.Dir, "log", "--format=%h %s", before+".."+head)
	if _, err := Git(c.Dir, "update-ref", "-m", "looprinter: agent commits taken off", "HEAD", before, head); err != nil {
		return ""
	}
	return strings.Join(strings.Split(strings.TrimSpace(log), "\n"), "; ")
}

// PushBranch pushes the current branch to the configured remote.
func (c *Committer) PushBranch() error {
	b := CurrentBranch(c.Dir)
	if b == "" {
		return errors.New("push: HEAD is detached")
	}
	_, err := Git(c.Dir, "push", "-q", PushTarget(c.Dir, c.Remote), "HEAD:refs/heads/"+b)
	return err
}

// PushTarget is what a push from dir names for remote: the remote itself,
// or, when its push URL is a relative path (`git remote add origin
// ../remote.git`), that path made absolute against the repository's main
// work tree, where git reads it. From a linked worktree elsewhere on disk
// (a git.worktree loop's, the landing's) git would read it against the
// worktree's own folder, where it names nothing.
func PushTarget(dir, remote string) string {
	url, err := Git(dir, "remote", "get-url", "--push", remote)
	if err != nil || !relativePathURL(url) {
		return remote
	}
	main := mainWorktree(dir)
	if main == "" {
		return remote
	}
	return filepath.Join(main, filepath.FromSlash(url))
}

// relativePathURL tells a remote URL that is a relative path on disk from
// an absolute path, a URL (scheme://) and scp-like host:path.
func relativePathURL(url string) bool {
	if url == "" || filepath.IsAbs(url) || strings.Contains(url, "://") {
		return false
	}
	if i := strings.Index(url, ":"); i > 0 && !strings.Contains(url[:i], "/") {
		return false // host:path
	}
	return true
}

// mainWorktree is the repository's main work tree (its git folder for a
// bare repository): the first `git worktree list` names.
func mainWorktree(dir string) string {
	out, err := Git(dir, "worktree", "list", "--porcelain")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			return p
		}
	}
	return ""
}

// dropRecords removes the loop's records from `git status --porcelain` output.
func dropRecords(status string) string {
	var keep []string
	for _, line := range strings.Split(status, "\n") {
		if line == "" || strings.Contains(line, loopdir.RecordsDir+"/") || strings.HasSuffix(line, " "+loopdir.RecordsDir) {
			continue
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}

// subcommand names a git invocation in messages: its subcommand, without
// the -c settings and the commit message.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		if args[i] == "-c" || args[i] == "-C" {
			i++
			continue
		}
		if !strings.HasPrefix(args[i], "-") {
			if args[i] == "worktree" && i+1 < len(args) {
				return args[i] + " " + args[i+1]
			}
			return args[i]
		}
	}
	return strings.Join(args, " ")
}

// noteVerdict puts a gate's verdict in a note on the commit it judged
// (refs/notes/looprinter; `git log --notes=looprinter` shows it), instead
// of an empty commit. The records hold the verdict either way: a note
// that cannot be written is no failure.
func (c *Committer) noteVerdict(commit, subject, body string) {
	msg := subject
	if body != "" {
		msg += "\n\n" + body
	}
	Git(c.Dir, append(append([]string{}, c.ident...), "notes", "--ref=looprinter", "append", "-m", msg, commit)...)
}
