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
	cmd := exec.CommandContext(ctx, path, p.bwrapArgs(nil, args[0], args[1:])...)
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
	// The private /tmp hides the host's; what the command needs to run from
	// there (a binary built by go run or go test, a PATH folder of tests)
	// stays visible, read-only.
	var visible []string
	if c, err := canonical(path); err == nil {
		visible = append(visible, c)
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if c, err := canonical(d); err == nil && filepath.IsAbs(d) {
			visible = append(visible, c)
		}
	}
	return bwrapOnce.path, p.bwrapArgs(visible, path, args), []string{"TMPDIR=/tmp"}, nil
}

// bwrapArgs: / read-only, a minimal /dev, a fresh /proc for the new PID
// namespace, a private /tmp and, read-only, the paths of visible that are in
// the host's /tmp; then the writable trees (after the tmpfs, so a loop folder
// under /tmp stays visible; parents before children), then the read-only
// paths over them. A read-only path outside every writable tree is
// read-only already and is left alone.
func (p Policy) bwrapArgs(visible []string, path string, args []string) []string {
	a := []string{
		"--die-with-parent", "--unshare-pid", "--new-session",
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
	}
	writable := append([]string{p.Dir}, p.Writable...)
	sortByDepth(writable)
	seen := map[string]bool{}
	sortByDepth(visible)
	var shown []string
	for _, v := range visible {
		if !within(v, "/tmp") || v == "/tmp" || covered(v, writable) || covered(v, shown) {
			continue
		}
		shown = append(shown, v)
		a = append(a, "--ro-bind", v, v)
	}
	for _, w := range writable {
		if !seen[w] {
			seen[w] = true
			a = append(a, "--bind", w, w)
		}
	}
	for _, r := range p.ReadOnly {
		if within(r, "/tmp") {
			// hidden by the private /tmp otherwise: bind it back, read-only
			a = append(a, "--ro-bind", r, r)
			continue
		}
		for _, w := range writable {
			if within(r, w) {
				a = append(a, "--ro-bind", r, r)
				break
			}
		}
	}
	a = append(a, "--chdir", p.Dir, "--", path)
	return append(a, args...)
}

// covered says whether path is one of roots or inside one.
func covered(path string, roots []string) bool {
	for _, r := range roots {
		if within(path, r) {
			return true
		}
	}
	return false
}
