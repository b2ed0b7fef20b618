package confine

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// HideGit lays the repository's hiding in the agent's layer: git's note
// at .git (every git command the agent runs fails, saying why) and the
// repository's other paths in the loop folder removed.
func HideGit(lay sandbox.Layer, gh *judge.GitHide) error {
	if err := sandbox.HideInLayer(lay, gh.InTree[1:]); err != nil {
		return err
	}
	return sandbox.PlaceInLayer(lay, gh.InTree[0], []byte(judge.GitHiddenNote))
}

// Confine is the sandbox of an agent run of loop l: the loop file,
// working-records/, the engine's state folder, .git when the engine commits,
// and the paths in readOnly stay read-only; the loop folder, the agent's home
// and a private temp folder are writable. It returns the wrap for
// agent.Request.Wrap (nil under sandbox: off) and the kind in force.
func Confine(l *spec.Loop, readOnly []string) (func(string, []string) (string, []string, []string, error), string, error) {
	p, err := Policy(l, readOnly)
	if err != nil {
		return nil, "", err
	}
	if p.Kind == sandbox.Off {
		return nil, p.Kind, nil
	}
	p.View, p.Shown = View(l), Shown(l)
	return p.Wrap, p.Kind, nil
}

// Policy is the sandbox policy of an agent run of loop l (see Confine).
// keep are more writable paths inside the engine's state folder (the
// loop's private HOME), kept out of what is read-only there.
func Policy(l *spec.Loop, readOnly []string, keep ...string) (sandbox.Policy, error) {
	kind, err := sandbox.Resolve(l.Sandbox)
	if err != nil {
		return sandbox.Policy{}, err
	}
	if kind == sandbox.Off {
		return sandbox.Policy{Kind: kind}, nil
	}
	ro := append([]string{l.Path, loopdir.Dir(l.Dir).Records()}, readOnly...)
	ro = append(ro, ReadOnlyAround(loopdir.StateRoot(), append([]string{l.Dir}, keep...)...)...)
	if g := GitDir(l); g != "" {
		ro = append(ro, g)
	}
	// The trees every agent of the loop names (each role may have its own
	// CLI home), and the engine's own.
	writable := WritableTrees(l.Agent.Env)
	for _, a := range l.Agents {
		writable = append(writable, WritableTrees(a.Env)...)
	}
	return sandbox.Policy{Kind: kind, Dir: l.Dir, Writable: writable, ReadOnly: ro}, nil
}

// ReadOnlyAround is root, read-only, except the ways down to the paths in
// keep that are inside it (a worktree loop runs inside the state folder,
// and so does a private HOME): each folder on a way contributes its other
// entries, so the kept paths stay writable and everything beside them does
// not.
func ReadOnlyAround(root string, keep ...string) []string {
	var ways [][]string
	for _, k := range keep {
		rel, err := filepath.Rel(root, k)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		ways = append(ways, strings.Split(filepath.ToSlash(rel), "/"))
	}
	if len(ways) == 0 {
		return []string{root}
	}
	return readOnlyBeside(root, ways)
}

// readOnlyBeside lists the entries of cur that no way goes through, and
// those beside the ways further down.
func readOnlyBeside(cur string, ways [][]string) []string {
	next := map[string][][]string{}
	for _, w := range ways {
		if len(w) == 0 {
			return nil // cur itself is kept
		}
		next[w[0]] = append(next[w[0]], w[1:])
	}
	var out []string
	entries, _ := os.ReadDir(cur)
	for _, en := range entries {
		if sub, ok := next[en.Name()]; ok {
			out = append(out, readOnlyBeside(filepath.Join(cur, en.Name()), sub)...)
			continue
		}
		out = append(out, filepath.Join(cur, en.Name()))
	}
	return out
}

// RepoGitDir is the .git folder of the repository dir is in ("" when none),
// whoever commits to it.
func RepoGitDir(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil && fi.IsDir() {
			return filepath.Join(d, ".git")
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// GitDir is the repository folder the engine commits to, when it does:
// agents may not rewrite the history the engine's commits live in.
func GitDir(l *spec.Loop) string {
	if l.Shape == spec.ShapeReview || (l.Git.Commit != nil && !*l.Git.Commit) {
		return "" // in a review the fixer commits its fixes
	}
	for d := l.Dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return filepath.Join(d, ".git")
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// WritableTrees are the places outside the loop folder an agent CLI needs
// to write: its home (config, sessions, caches) and the folders named by the
// usual variables and by each backend's own (agent.Backend.HomeEnv), from
// the engine's environment or the agent's env.
func WritableTrees(env map[string]string) []string {
	get := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	keys := []string{"HOME"}
	for _, b := range agent.All() {
		keys = append(keys, b.HomeEnv...)
	}
	keys = append(keys, "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "GOCACHE", "GOMODCACHE", "GOPATH", "npm_config_cache")
	var out []string
	for _, k := range keys {
		if v := get(k); v != "" && filepath.IsAbs(v) && v != "/" {
			for _, p := range filepath.SplitList(v) {
				out = append(out, p)
			}
		}
	}
	return out
}
