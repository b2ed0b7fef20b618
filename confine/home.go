package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
)

// homeSeeds are files and folders under HOME, beside the agent CLIs' own
// (agent.Backend.HomePaths), that a private HOME starts with: the user's
// git identity and package registry settings, so that an agent's own git
// and npm work as the user's do. None is read by a check or by the
// engine's git, which read the real HOME.
var homeSeeds = []string{".gitconfig", ".config/git", ".npmrc"}

// Home is the private HOME and caches an agent gets where they cannot be
// copy-on-write layers (Landlock; bubblewrap without overlayfs): folders of
// the loop's in the engine's private folder, the only trees outside the
// loop folder it may write. The user's real HOME and caches are read-only
// to it, so nothing it writes there (`go env -w`, a user-site `.pth`, an
// `~/.npmrc`, a `~/.gitconfig`) reaches the checks or the engine's git.
type Home struct {
	Writable []string // the private HOME and cache folders
	Env      []string // HOME, XDG_*, the caches, each backend's home variable
}

// AgentHome makes (and seeds, the first time) the loop's private HOME and
// caches, in priv, the engine's private folder for the loop. env is the
// agent's environment from the loop file.
func AgentHome(priv string, env map[string]string) (Home, error) {
	get := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	p := loopdir.Private(priv)
	home, cache := p.AgentHome(), p.AgentCache()
	for _, d := range []string{home, cache} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Home{}, fmt.Errorf("the agents' private HOME: %w", err)
		}
	}
	realHome := get("HOME")
	var seeds []string
	var creds []string
	for _, b := range agent.All() {
		seeds = append(seeds, b.HomePaths...)
		for _, f := range b.Login.Files {
			if !strings.HasPrefix(f, "$") {
				creds = append(creds, f)
			}
		}
	}
	if realHome != "" && filepath.IsAbs(realHome) {
		for _, rel := range append(seeds, homeSeeds...) {
			seedOnce(filepath.Join(realHome, rel), filepath.Join(home, rel))
		}
		// A login made (or renewed) by the user after the seed reaches the
		// private HOME; the agent's own renewals stay there.
		for _, rel := range creds {
			refreshNewer(filepath.Join(realHome, rel), filepath.Join(home, rel))
		}
	}
	out := Home{Writable: []string{home, cache}}
	out.Env = []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + cache,
		"GOCACHE=" + filepath.Join(cache, "go-build"),
		"GOPATH=" + filepath.Join(home, "go"),
		"npm_config_cache=" + filepath.Join(cache, "npm"),
		"PIP_CACHE_DIR=" + filepath.Join(cache, "pip"),
	}
	// The module cache holds what the user downloaded: read-only to the
	// agent (the checks trust it), not a copy.
	if mc := sandbox.GoModCache(get, realHome); mc != "" {
		out.Env = append(out.Env, "GOMODCACHE="+mc)
	}
	// A CLI folder moved by its variable (CLAUDE_CONFIG_DIR, CODEX_HOME…)
	// gets a private copy too.
	for _, b := range agent.All() {
		for _, k := range b.HomeEnv {
			v := get(k)
			if v == "" || !filepath.IsAbs(v) {
				continue
			}
			to := filepath.Join(home, ".looprinter-env", k)
			seedOnce(v, to)
			for _, f := range b.Login.Files {
				if rest, ok := strings.CutPrefix(f, "$"+k+"/"); ok {
					refreshNewer(filepath.Join(v, rest), filepath.Join(to, rest))
				}
			}
			os.MkdirAll(to, 0o700)
			out.Env = append(out.Env, k+"="+to)
		}
	}
	return out, nil
}

// seedOnce copies from to to when to does not exist yet (a file, or a
// folder with what it holds; links are copied as links).
func seedOnce(from, to string) {
	if _, err := os.Lstat(to); err == nil {
		return
	}
	fi, err := os.Lstat(from)
	if err != nil {
		return
	}
	os.MkdirAll(filepath.Dir(to), 0o700)
	if fi.IsDir() {
		if err := sandbox.CopyTree(from, to, nil); err != nil {
			os.RemoveAll(to)
		}
		return
	}
	if fi.Mode().IsRegular() {
		sandbox.CopyFile(from, to, fi.Mode().Perm())
	}
}

// refreshNewer replaces to with from when from is a regular file changed
// after to was (a login the user renewed).
func refreshNewer(from, to string) {
	fi, err := os.Stat(from)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	if ti, err := os.Lstat(to); err == nil && !fi.ModTime().After(ti.ModTime()) {
		return
	}
	os.MkdirAll(filepath.Dir(to), 0o700)
	tmp := to + ".looprinter-new"
	os.Remove(tmp)
	if err := sandbox.CopyFile(from, tmp, fi.Mode().Perm()); err != nil {
		os.Remove(tmp)
		return
	}
	if err := os.Rename(tmp, to); err != nil {
		os.Remove(tmp)
	}
}
