//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Under Landlock an agent writes .git/config (core.hooksPath), a hook and
// info/attributes: the hook would run unconfined at the user's next
// commit. GuardGit's Restore puts them back, and the commit runs no hook.
func TestGuardGitUndoesAgentHooks(t *testing.T) {
	need(t, Landlock)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	marker := filepath.Join(t.TempDir(), "hook-ran")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	git("add", "a.txt")
	git("commit", "-qm", "first")
	gitDir := filepath.Join(dir, ".git")
	configBefore, _ := os.ReadFile(filepath.Join(gitDir, "config"))

	attack := `set -e
git config -f .git/config core.hooksPath .git/evil
mkdir -p .git/evil .git/hooks
printf '#!/bin/sh\ntouch ` + marker + `\n' > .git/evil/pre-commit
cp .git/evil/pre-commit .git/hooks/pre-commit
chmod +x .git/evil/pre-commit .git/hooks/pre-commit
echo '* filter=evil' > .git/info/attributes
echo agent`
	run := func() {
		t.Helper()
		p := Policy{Kind: Landlock, Dir: dir, ReadOnly: []string{gitDir}}
		path, args, extra, err := p.Wrap("/bin/sh", []string{"-c", attack})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(path, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), extra...)
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "agent") {
			t.Fatalf("the agent's writes to .git were refused: Landlock gained the power to keep them (update this test and the docs): %v %s", err, out)
		}
	}
	commit := func(msg string) bool {
		t.Helper()
		os.Remove(marker)
		os.WriteFile(filepath.Join(dir, "a.txt"), []byte(msg+"\n"), 0o644)
		git("commit", "-qam", msg)
		_, err := os.Stat(marker)
		return err == nil
	}

	// Without the guard the hook runs at the user's next commit.
	run()
	if !commit("unguarded") {
		t.Fatal("the planted hook did not run: the attack is not what this test thinks")
	}
	git("config", "--unset", "core.hooksPath")
	os.RemoveAll(filepath.Join(gitDir, "evil"))
	os.Remove(filepath.Join(gitDir, "hooks", "pre-commit"))
	os.Remove(filepath.Join(gitDir, "info", "attributes"))
	configBefore, _ = os.ReadFile(filepath.Join(gitDir, "config"))

	g, err := GuardGit(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	run()
	changed, err := g.Restore()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"config", "hooks/pre-commit", "info/attributes"}
	if !reflect.DeepEqual(changed, want) {
		t.Errorf("Restore named %v, want %v", changed, want)
	}
	if after, _ := os.ReadFile(filepath.Join(gitDir, "config")); string(after) != string(configBefore) {
		t.Errorf(".git/config not put back:\n%s", after)
	}
	if commit("guarded") {
		t.Fatal("the agent's hook ran at the user's commit after Restore")
	}
}

// A hooks folder replaced by a link, and a removed info/exclude, are put
// back as folders and files.
func TestGuardGitLinksAndRemovals(t *testing.T) {
	gitDir := t.TempDir()
	for _, d := range []string{"hooks", "info"} {
		os.Mkdir(filepath.Join(gitDir, d), 0o755)
	}
	os.WriteFile(filepath.Join(gitDir, "info", "exclude"), []byte("# x\n"), 0o644)
	os.WriteFile(filepath.Join(gitDir, "config"), []byte("[core]\n"), 0o644)
	g, err := GuardGit(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	os.WriteFile(filepath.Join(elsewhere, "pre-commit"), []byte("#!/bin/sh\n"), 0o755)
	os.RemoveAll(filepath.Join(gitDir, "hooks"))
	os.Symlink(elsewhere, filepath.Join(gitDir, "hooks"))
	os.Remove(filepath.Join(gitDir, "info", "exclude"))
	changed, err := g.Restore()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(changed, []string{"hooks", "info/exclude"}) {
		t.Errorf("changed %v", changed)
	}
	if fi, err := os.Lstat(filepath.Join(gitDir, "hooks")); err != nil || !fi.IsDir() {
		t.Errorf("hooks is not a folder again: %v", err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "pre-commit")); err != nil {
		t.Error("Restore removed through the link")
	}
	if b, _ := os.ReadFile(filepath.Join(gitDir, "info", "exclude")); string(b) != "# x\n" {
		t.Errorf("info/exclude %q", b)
	}
	if changed, err := g.Restore(); err != nil || len(changed) != 0 {
		t.Errorf("a second Restore changed %v (%v)", changed, err)
	}
	os.Symlink("/etc", filepath.Join(gitDir, "config.worktree"))
	if _, err := GuardGit(gitDir); err == nil {
		t.Error("a control path that is a link was snapshotted")
	}
}

// A snapshot saved and read back restores as the one taken; a saved file
// naming paths outside the repository folder is refused.
func TestGuardGitSavedAndLoaded(t *testing.T) {
	gitDir := filepath.Join(t.TempDir(), ".git")
	os.MkdirAll(filepath.Join(gitDir, "hooks"), 0o755)
	os.WriteFile(filepath.Join(gitDir, "config"), []byte("[core]\n"), 0o644)
	g, err := GuardGit(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(t.TempDir(), "guard.json")
	if err := g.Save(saved); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(gitDir, "config"), []byte("[core]\n\thooksPath = /tmp/evil\n"), 0o644)
	os.WriteFile(filepath.Join(gitDir, "hooks", "pre-commit"), []byte("#!/bin/sh\n"), 0o755)
	back, err := LoadGitGuard(saved)
	if err != nil {
		t.Fatal(err)
	}
	undone, err := back.Restore()
	if err != nil || strings.Join(undone, ",") != "config,hooks/pre-commit" {
		t.Fatalf("restored %v (%v), want config and hooks/pre-commit", undone, err)
	}
	if b, _ := os.ReadFile(filepath.Join(gitDir, "config")); string(b) != "[core]\n" {
		t.Errorf("config %q", b)
	}
	for _, bad := range []string{`{"git_dir":"` + gitDir + `","files":{"../x":{"mode":420}}}`, `{"git_dir":"rel","files":{}}`, `{`} {
		os.WriteFile(saved, []byte(bad), 0o600)
		if _, err := LoadGitGuard(saved); err == nil {
			t.Errorf("%s: read without an error", bad)
		}
	}
}
