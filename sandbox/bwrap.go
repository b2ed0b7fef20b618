package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

var bwrapOnce struct {
	sync.Once
	path    string
	version string
	err     error
}

// bwrapProbe runs `/bin/true` under bubblewrap with the flags Wrap uses, once
// per process, and says why it failed.
func bwrapProbe() error {
	bwrapOnce.Do(func() {
		bwrapOnce.path, bwrapOnce.version, bwrapOnce.err = probeBwrap()
	})
	return bwrapOnce.err
}

func bwrapWhat() string {
	if bwrapOnce.path == "" {
		return "bubblewrap"
	}
	if bwrapOnce.version != "" {
		return bwrapOnce.version + " at " + bwrapOnce.path
	}
	return "bubblewrap at " + bwrapOnce.path
}

func probeBwrap() (path, version string, err error) {
	path, err = exec.LookPath("bwrap")
	if err != nil {
		return "", "", errors.New("bubblewrap (bwrap) is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, path, "--version").Output(); err == nil {
		version = strings.TrimSpace(string(out))
	}
	dir, err := os.MkdirTemp("", "looprinter-bwrap-probe-")
	if err != nil {
		return path, version, err
	}
	defer os.RemoveAll(dir)
	ro := filepath.Join(dir, "ro")
	if err := os.WriteFile(ro, nil, 0o644); err != nil {
		return path, version, err
	}
	dir, _ = canonical(dir)
	truePath, err := exec.LookPath("true")
	args := []string{truePath}
	if err != nil {
		args = []string{"/bin/sh", "-c", ":"}
	}
	p := Policy{Kind: Bwrap, Dir: dir, ReadOnly: []string{filepath.Join(dir, "ro")}}
	cmd := exec.CommandContext(ctx, path, p.bwrapArgs(dir, args[0], args[1:])...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return path, version, fmt.Errorf("%s does not start a sandbox here: %s", path, msg)
	}
	return path, version, nil
}

// wrapBwrap: p's paths are canonical and exist.
func (p Policy) wrapBwrap(path string, args []string) (string, []string, []string, error) {
	if err := bwrapProbe(); err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: bwrap: %w", err)
	}
	// The host's /tmp stays visible, read-only like the rest of the file
	// system (programs and tools installed there must run); the agent's
	// temporary files go to a private folder, emptied for every run.
	tmp := TempDirOf(p.Dir, p.Slot)
	if err := freshPrivateDir(tmp); err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: private temporary folder: %w", err)
	}
	return bwrapOnce.path, p.bwrapArgs(tmp, path, args), []string{"TMPDIR=" + tmp}, nil
}

// bwrapArgs: no capabilities, / read-only, a minimal /dev (its own
// /dev/shm), a fresh /proc for the new PID namespace; then the writable trees (the loop folder, the others, the
// private temporary folder; parents before children), then the read-only
// paths over them. A read-only path outside every writable tree is
// read-only already and is left alone.
func (p Policy) bwrapArgs(tmp, path string, args []string) []string {
	a := []string{
		"--die-with-parent", "--unshare-pid", "--new-session",
		// A user namespace of its own and no capability inside it, as root
		// too: the agent cannot remount /, unmount /proc, or write past a
		// read-only bind.
		"--unshare-user", "--cap-drop", "ALL",
	}
	// The view is built from the manifest, not from the host: what it does
	// not name does not exist in the run's view (other projects, other
	// loops, the rest of HOME, the host's sockets).
	writable := append([]string{p.Dir, tmp}, p.Writable...)
	sortByDepth(writable)
	// One manifest for the view and its sockets: each is a look at every
	// path it names.
	view := p.manifest(path)
	a = append(a, viewArgs(view.beside(writable))...)
	seen := map[string]bool{}
	for _, w := range writable {
		if !seen[w] {
			seen[w] = true
			a = append(a, "--bind", w, w)
		}
	}
	for _, r := range p.ReadOnly {
		for _, w := range writable {
			if Within(r, w) && p.visible(r) {
				a = append(a, "--ro-bind", r, r)
				break
			}
		}
	}
	// The repository the engine commits to, when it lies outside the
	// loop folder: read-only, like the rest of ReadOnly outside every
	// writable tree that the view shows.
	for _, r := range p.Shown {
		if !covered(r, writable) {
			a = append(a, "--ro-bind", r, r)
		}
	}
	for _, h := range p.Hidden {
		if !p.visible(h) {
			continue // not in the view at all
		}
		if fi, err := os.Stat(h); err == nil && fi.IsDir() {
			// Empty and read-only: nothing to read, nowhere to write.
			a = append(a, "--tmpfs", h, "--remount-ro", h)
		}
	}
	var masked []string
	for _, m := range p.Masked {
		// A path inside a hidden folder is empty already (and bubblewrap
		// could not make its mount point in the read-only tmpfs).
		if p.visible(m) && !covered(m, p.Hidden) {
			masked = append(masked, m)
		}
	}
	a = append(a, maskArgs(masked)...)
	a = append(a, socketArgs(view)...)
	a = append(a, "--chdir", p.Dir, "--", path)
	return append(a, args...)
}

// covered says whether path is one of roots or inside one.
func covered(path string, roots []string) bool {
	for _, r := range roots {
		if Within(path, r) {
			return true
		}
	}
	return false
}
