package initwiz

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// CommitLoopFile commits the loop file init wrote, with .gitignore when
// git sees a change to it, and nothing else: other staged changes stay
// staged (the commit names its paths). It says what it did, or, when the
// commit cannot be made (git has no author configured, a hook-free commit
// still fails), what the user is to run; "" outside a git work tree or
// when there is nothing to commit.
func CommitLoopFile(dir, loopFile string) string {
	if gitTop(dir) == "" {
		return ""
	}
	rel, err := filepath.Rel(dir, loopFile)
	if err != nil {
		return ""
	}
	rel = filepath.ToSlash(rel)
	paths := []string{}
	for _, p := range []string{rel, ".gitignore"} {
		if st, err := git(dir, "status", "--porcelain", "--", p); err == nil && st != "" {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return ""
	}
	msg := "looprinter: the loop file"
	_, err = git(dir, append([]string{"add", "--"}, paths...)...)
	if err == nil {
		_, err = git(dir, append([]string{"commit", "-q", "-m", msg, "--"}, paths...)...)
	}
	if err != nil {
		return commitFailed(err, paths, msg)
	}
	return fmt.Sprintf("Committed %s (%q), and nothing else: a loop's run warns about a loop file git has not committed (--no-commit leaves it to you)", strings.Join(paths, " and "), msg)
}

func commitFailed(err error, paths []string, msg string) string {
	why := err.Error()
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		why = strings.TrimSpace(string(ee.Stderr))
		if i := strings.LastIndex(why, "\n"); i >= 0 {
			why = strings.TrimSpace(why[i+1:])
		}
	}
	return fmt.Sprintf("Could not commit the loop file (%s): commit it before the first run (which warns about an uncommitted loop file): git add %s && git commit -m %q",
		why, strings.Join(paths, " "), msg)
}
