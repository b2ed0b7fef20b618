package fleet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/rollback"
	"github.com/looprinter/looprinter/safegit"
)

// blockedError: the loop cannot go on from this branch.
type blockedError struct{ msg string }

func (e *blockedError) Error() string { return e.msg }

// refusedError: the remote refused the push because the branch moved.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// git runs git in dir and returns its trimmed output; the error carries
// git's own message.
func git(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", safegit.Args(args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return strings.TrimSpace(out.String()), fmt.Errorf("git %s in %s: %v: %s", args[0], dir, err, msg)
	}
	return strings.TrimSpace(out.String()), nil
}

// checkout makes repo (under folder) a clean checkout of the loop's branch
// at its head on the remote. warm: this worker pushed that very head, so the
// files git ignores (installed dependencies) are kept; otherwise they are
// removed too and the setup runs again here. A head that no longer holds the
// loop's last commit (a force push) stops the loop; a head that moved on
// from it (someone pushed) is used, with a note.
//
// Commits on top of the loop's last commit that are all this loop's own
// (an attempt of this step that pushed but never reported: its worker was
// taken for dead) are not built on: the step starts again from the last
// commit, and replace names the head its push then replaces (with a lease),
// after that head is kept on a branch of its own.
func checkout(ctx context.Context, folder, repo string, in StepInput) (warm bool, head, replace, note string, err error) {
	warm, head, note, err = checkoutHead(ctx, folder, repo, in)
	if err != nil || in.Commit == "" || head == in.Commit {
		return warm, head, "", note, err
	}
	out, err := git(repo, "log", "--format=%(trailers:key=Looprinter-Workflow,valueonly,separator=)", in.Commit+".."+head)
	if err != nil {
		return false, "", "", "", err
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != in.WorkflowID {
			return warm, head, "", note, nil // someone else's commits: the step runs on them
		}
	}
	kept := keepUnreported(repo, in.Branch, in.Seq, head)
	if _, err := git(repo, "checkout", "--quiet", "-f", "-B", in.Branch, in.Commit); err != nil {
		return false, "", "", "", err
	}
	if _, err := git(repo, "clean", "--quiet", "-ffdx"); err != nil {
		return false, "", "", "", err
	}
	note = fmt.Sprintf("the branch %s holds %s, pushed by an attempt of this loop that never reported (its worker was taken for dead); this step runs again from %s and replaces it; %s",
		in.Branch, short(head), short(in.Commit), kept)
	return false, in.Commit, head, note, nil
}

func keepUnreported(repo, branch string, seq int, commit string) string {
	side := fmt.Sprintf("%s-looprinter-unreported-%d-%s", branch, seq, short(commit))
	if _, err := git(repo, "push", "--quiet", "origin", commit+":refs/heads/"+side); err != nil {
		return "it could not be kept on a branch of its own: " + err.Error()
	}
	return "it is kept on branch " + side
}

func checkoutHead(ctx context.Context, folder, repo string, in StepInput) (warm bool, head, note string, err error) {
	if err := os.MkdirAll(folder, 0o700); err != nil {
		return false, "", "", err
	}
	if _, err := os.Stat(filepath.Join(repo, ".git")); err != nil {
		os.RemoveAll(repo)
		if _, err := git(folder, "clone", "--quiet", "--no-checkout", in.Remote, "repo"); err != nil {
			return false, "", "", err
		}
	} else if _, err := git(repo, "remote", "set-url", "origin", in.Remote); err != nil {
		return false, "", "", err
	}
	if ctx.Err() != nil {
		return false, "", "", ctx.Err()
	}
	ref := "refs/remotes/origin/" + in.Branch
	// The loop's kept refs (work a rollback undid) come along: the engine
	// checks they still name what it kept.
	kept := "+" + rollback.RefPrefix(in.Name) + "*:" + rollback.RefPrefix(in.Name) + "*"
	if _, err := git(repo, "fetch", "--quiet", "--prune", "origin", "+refs/heads/"+in.Branch+":"+ref, kept); err != nil {
		return false, "", "", err
	}
	head, err = git(repo, "rev-parse", "--verify", ref+"^{commit}")
	if err != nil {
		return false, "", "", err
	}
	if in.Commit != "" && head != in.Commit {
		if _, err := git(repo, "merge-base", "--is-ancestor", in.Commit, head); err != nil {
			return false, "", "", &blockedError{fmt.Sprintf("the branch %s on %s no longer holds the loop's last commit %s (its history was rewritten): the loop stops rather than judge work it cannot trace", in.Branch, in.Remote, short(in.Commit))}
		}
		note = fmt.Sprintf("the branch %s moved from %s to %s outside the loop; this step runs on %s", in.Branch, short(in.Commit), short(head), short(head))
	}
	pushed, _ := os.ReadFile(filepath.Join(folder, "pushed"))
	warm = in.Commit != "" && head == in.Commit && strings.TrimSpace(string(pushed)) == head
	if _, err := git(repo, "checkout", "--quiet", "-f", "-B", in.Branch, head); err != nil {
		return false, "", "", err
	}
	if _, err := git(repo, "reset", "--quiet", "--hard", head); err != nil {
		return false, "", "", err
	}
	clean := "-ffdx"
	if warm {
		clean = "-ffd"
	}
	if _, err := git(repo, "clean", "--quiet", clean); err != nil {
		return false, "", "", err
	}
	return warm, head, note, nil
}

// commitStep commits everything the step changed, the loop's records and
// output included even when .gitignore names them, and returns the commit.
// When the engine moved the branch back during the step (a rollback to a
// checkpoint), the commit goes on top of base, the head the step started
// from, with the files as the rollback left them: the branch only moves
// forward, and the undone work is on the loop's kept refs.
func commitStep(repo, rel, base, subject, body string) (string, error) {
	if _, err := git(repo, "add", "-A"); err != nil {
		return "", err
	}
	dir := path.Dir(rel)
	for _, p := range []string{rel, path.Join(dir, loopdir.RecordsDir), path.Join(dir, loopdir.OutputDir)} {
		if _, err := os.Lstat(filepath.Join(repo, filepath.FromSlash(p))); err == nil {
			if _, err := git(repo, "add", "-f", "--", p); err != nil {
				return "", err
			}
		}
	}
	ident := []string{"-c", "user.name=looprinter", "-c", "user.email=looprinter@localhost", "-c", "commit.gpgsign=false"}
	if _, err := git(repo, "merge-base", "--is-ancestor", base, "HEAD"); base != "" && err != nil {
		tree, err := git(repo, "write-tree")
		if err != nil {
			return "", err
		}
		commit, err := git(repo, append(ident, "commit-tree", tree, "-p", base, "-m", subject, "-m", body)...)
		if err != nil {
			return "", err
		}
		if _, err := git(repo, "reset", "--quiet", "--soft", commit); err != nil {
			return "", err
		}
		return commit, nil
	}
	if _, err := git(repo, append(ident, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", subject, "-m", body)...); err != nil {
		return "", err
	}
	return git(repo, "rev-parse", "HEAD")
}

// pushKept pushes the loop's kept refs, as the engine's ledger has them.
func pushKept(repo, name string) error {
	if out, err := git(repo, "for-each-ref", "--format=%(refname)", rollback.RefPrefix(name)); err != nil || out == "" {
		return err
	}
	_, err := git(repo, "push", "--quiet", "origin", "+"+rollback.RefPrefix(name)+"*:"+rollback.RefPrefix(name)+"*")
	return err
}

// push pushes commit to the branch, never by force: when the branch moved
// since head was fetched, the remote refuses and a refusedError says so.
func push(repo, branch, head, replace, commit string) error {
	args := []string{"push", "--quiet"}
	if replace != "" {
		args = append(args, "--force-with-lease=refs/heads/"+branch+":"+replace)
	}
	_, err := git(repo, append(args, "origin", commit+":refs/heads/"+branch)...)
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range []string{"non-fast-forward", "fetch first", "[rejected]", "stale info", "cannot lock ref"} {
		if strings.Contains(msg, s) {
			return &refusedError{msg: "the head is no longer " + short(head)}
		}
	}
	return err
}

// keepRefused pushes a refused step's commit to a branch of its own, so its
// work is not lost, and says where it is.
func keepRefused(repo, branch string, seq int, commit string) string {
	side := fmt.Sprintf("%s-looprinter-refused-%d-%s", branch, seq, short(commit))
	if _, err := git(repo, "push", "--quiet", "origin", commit+":refs/heads/"+side); err != nil {
		return "it could not be kept on a branch of its own: " + err.Error()
	}
	return "its work is kept on branch " + side
}

func short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}
