// Package sandbox confines agent runs and the processes they start.
//
// The loop file's `sandbox:` field names a mode: "auto" (the default),
// "bwrap", "landlock" or "off". [Resolve] turns a mode into the kind in force
// on this machine: auto picks bwrap when bubblewrap works here, else landlock
// when the kernel has it, else it is an error that says what to install.
//
// A [Policy] says what an agent run may write: its loop folder (Dir), more
// writable trees (the user's HOME, where agent CLIs keep their config, and
// the like), and paths that stay read-only although they lie inside a
// writable tree (protected files, the loop file, working-records, the
// engine's state root, .git). [Policy.Wrap] turns the command to start into
// the command that starts it confined:
//
//	kind, err := sandbox.Resolve(mode)
//	p := sandbox.Policy{Kind: kind, Dir: dir, Writable: w, ReadOnly: ro}
//	path, args, extra, err := p.Wrap(path, args)
//	cmd := exec.Command(path, args...)
//	cmd.Env = append(env, extra...) // extra comes last: it wins
//
// bwrap runs the command in bubblewrap: a private mount namespace in which
// / is read-only, Dir and the writable trees are bound writable, the
// read-only paths are bound read-only over them (so they cannot be written,
// removed or renamed), /tmp is a private tmpfs (TMPDIR=/tmp), /dev holds only
// the harmless devices, and a private PID namespace: every process the agent
// starts (setsid, double fork, nohup) dies when the command exits or when
// bubblewrap is killed, even by SIGKILL. bubblewrap does not forward
// signals, so SIGTERM to the run ends the sandbox at once (no grace period).
// With Policy.Net set the run gets a network namespace of its own, whose
// only way out is the relay to the loop's proxy (network.go); without it
// the network is shared. Policy.Masked paths read as empty.
//
// landlock runs the command under a Landlock ruleset (Linux ≥ 5.13): read
// and execute everywhere, write only to Dir, the writable trees and a
// private temporary folder (TMPDIR). Landlock cannot deny a subtree of an
// allowed tree, so read-only paths inside Dir are NOT enforced (the engine's
// restore of protected files after every run is the protection there; see
// [Policy.Unenforced]); a read-only path inside another writable tree (the
// state root under HOME) is enforced by granting the tree's other entries
// one by one, which means that new entries directly in the directories on
// the way to it (HOME itself, for example) cannot be created. Landlock has
// no PID isolation: call [BecomeSubreaper] once in the engine and [Sweep]
// after each run so that escaped processes die with their run. The ruleset
// is applied by this package's init function in a re-executed copy of the
// running binary (see [Policy.Wrap]): every binary that imports this
// package can serve as the helper.
//
// off runs the command as it is; [BecomeSubreaper] and [Sweep] still apply.
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/looprinter/looprinter/sandbox/nshelper"
)

// Modes and kinds.
const (
	Auto     = "auto"
	Bwrap    = "bwrap"
	Landlock = "landlock"
	Off      = "off"
)

// Policy is what one confined run may write.
type Policy struct {
	// Kind is the resolved kind: "bwrap", "landlock" or "off".
	Kind string
	// Dir is the loop folder, the agent's working directory: writable.
	Dir string
	// Writable are more writable trees or files. Missing ones are skipped.
	Writable []string
	// ReadOnly are paths that stay read-only although they are inside a
	// writable tree. Missing ones are skipped.
	ReadOnly []string
	// Layers, for bwrap: copy-on-write layers over Dir and over writable
	// trees (see Layer). A read-only path inside a layered Dir is not bound
	// at all: the engine judges the layer before anything of it reaches
	// Dir, with one mount whatever the number of protected files.
	Layers []Layer
	// Hidden are folders whose content the agent may not read (the
	// holdout checks' output): under bwrap each is an empty tmpfs.
	Hidden []string
	// Masked are paths the agent may not read (credentials; see
	// Credentials): under bwrap a folder is an empty tmpfs, a file an
	// empty file. Landlock cannot mask a path inside a readable tree.
	Masked []string
	// Net confines the network (bwrap, landlock); nil: the network is open.
	Net *Network
	// Slot tells runs of the same loop at once apart (0: the loop's only
	// or first run): each has a private temporary folder of its own, so
	// that neither empties nor reads the other's (TempDirOf).
	Slot int
	// View says what the run sees besides its writable trees (see
	// BuildManifest): under bwrap nothing else of the machine is in its
	// view, under Landlock nothing else can be read.
	View ViewSpec
	// Shown are more paths shown read-only although no manifest entry
	// names them (the repository the engine commits to, outside the loop
	// folder).
	Shown []string
	// HomeMask: HOME's copy-on-write layer (bwrap) is built by
	// construction: it holds the manifest's entries under HOME, the
	// writable trees and the loop folder, each from the real HOME, over an
	// empty base; nothing else of the real HOME is in the view.
	HomeMask bool
	// Box: the run may be served by the loop's run box (bwrap with
	// layers): Wrap then returns a path only agent.Run starts
	// (TakeBoxedRun). Off, Wrap's command is one to execute.
	Box bool

	maskedHome string   // HOME, when its layer is built (buildHomeLayers)
	keptHome   []string // what the mask keeps of it
}

// viewEnv is the environment the view is built from.
func (p Policy) viewEnv() []string {
	if p.View.Env != nil {
		return p.View.Env
	}
	return os.Environ()
}

// visible says whether path is in the view: outside a masked HOME always
// (bubblewrap makes the mount point on the view's own root), inside it
// only where the mask keeps it.
func (p Policy) visible(path string) bool {
	if p.maskedHome == "" || !Within(path, p.maskedHome) {
		return true
	}
	return covered(path, p.keptHome)
}

// Resolve picks the kind for a mode on this machine. auto is bwrap when
// bubblewrap works here, else landlock when the kernel supports it, else an
// error naming what to install. An explicit bwrap or landlock that cannot
// work here is an error naming why. The probes run once per process.
func Resolve(mode string) (string, error) {
	if kind, handled, err := resolveHere(mode); handled {
		return kind, err
	}
	switch mode {
	case Off:
		return Off, nil
	case Bwrap:
		if err := bwrapProbe(); err != nil {
			return "", fmt.Errorf("sandbox: bwrap cannot run here: %v; install bubblewrap (apt-get install bubblewrap), or choose `sandbox: landlock` or `sandbox: auto` in the loop file", err)
		}
		return Bwrap, nil
	case Landlock:
		if err := landlockProbe(); err != nil {
			return "", fmt.Errorf("sandbox: landlock cannot run here: %v; it needs Linux 5.13 or later with Landlock enabled, or choose `sandbox: bwrap` or `sandbox: auto` in the loop file", err)
		}
		return Landlock, nil
	case Auto, "":
		berr := bwrapProbe()
		if berr == nil {
			return Bwrap, nil
		}
		lerr := landlockProbe()
		if lerr == nil {
			return Landlock, nil
		}
		return "", fmt.Errorf("sandbox: no sandbox can run here (bwrap: %v; landlock: %v): install bubblewrap (apt-get install bubblewrap), or use a kernel with Landlock (Linux 5.13 or later), or write `sandbox: off` in the loop file to run agents unconfined", berr, lerr)
	}
	return "", fmt.Errorf("sandbox: mode %q is not known (auto, bwrap, landlock, seatbelt or off)", mode)
}

// Guarantees says what the kind in force guarantees about an agent run
// and what it does not; for `looprinter doctor` and the reports.
func Guarantees(kind string) []string {
	always := "in every mode: an agent gets descriptors 0-2 only and a session of its own (no terminal); the engine's git runs no hook, fsmonitor or signing program"
	switch kind {
	case Bwrap:
		if err := LayerProbe(); err != nil {
			return []string{
				"guaranteed: no capabilities (as root too), its own PID namespace (nothing it starts outlives the run), protected files bound read-only; " + always,
				"not guaranteed: no copy-on-write layer here (" + err.Error() + "): the agent gets a private HOME and caches of the loop's instead (the real ones are read-only to it); each protected file is a bind of its own, slow with thousands",
			}
		}
		return []string{
			"guaranteed: the agent writes copy-on-write layers, never the host: the loop folder's is judged before it is applied, HOME's and the caches' are kept for the loop and never applied; no capabilities (as root too); its own PID namespace; " + always,
		}
	case Landlock:
		if err := CgroupProbe(); err != nil {
			return []string{
				"guaranteed: writes only to the loop folder, a private HOME and caches of the loop's (the real ones, which the checks and the engine's git read, are read-only to it) and a private temporary folder; no capabilities (as root too); no mounts; " + landlockUnixNote() + "; leftover processes swept before anything is judged; " + always,
				"not guaranteed: protected files in the loop folder, and .git's config, hooks and info (where a program for the user's next git command could be planted), are put back after the run, not refused (Landlock rules only grant: nothing inside the writable loop folder can be kept read-only); no PID namespace: other processes are visible in /proc (engines are not dumpable, but root reads them); no cgroup either (" + err.Error() + "): a daemon an agent started can outlive an engine that is killed (its leftover processes are swept only while an engine lives); holdout files cannot be hidden (a loop with holdout stops BLOCKED)",
			}
		}
		return []string{
			"guaranteed: writes only to the loop folder, a private HOME and caches of the loop's (the real ones, which the checks and the engine's git read, are read-only to it) and a private temporary folder; no capabilities (as root too); no mounts; " + landlockUnixNote() + "; each run in a cgroup of its own: what it starts is ended after the run, and after an engine that was killed, before anything is judged; " + always,
			"not guaranteed: protected files in the loop folder, and .git's config, hooks and info (where a program for the user's next git command could be planted), are put back after the run, not refused (Landlock rules only grant: nothing inside the writable loop folder can be kept read-only); no PID namespace: other processes are visible in /proc (engines are not dumpable, but root reads them); holdout files cannot be hidden (a loop with holdout stops BLOCKED)",
		}
	case Seatbelt:
		return []string{
			"guaranteed by the profile: writes only to the loop folder, HOME, the caches and a private temporary folder; the loop file, protected files, working-records/, .git and the engine's folders cannot be written, removed or renamed; signals only to the run's own processes; leftover processes (setsid daemons too, by the engine's mark in their environment) swept before anything is judged; " + always,
			"not verified: the Seatbelt sandbox is built and unit-tested but not yet exercised on a Mac by this project's CI",
			"not guaranteed: HOME and the caches are the user's own (the checks read what an agent wrote there); no PID namespace; the network is shared",
		}
	case Off:
		return []string{"not guaranteed: anything; the verdict holds only against an honest agent (" + always + ")"}
	}
	return nil
}

// Describe says, one line per kind, which kind is in force for mode and why
// the others are not; for `looprinter doctor`.
func Describe(mode string) (out []string) {
	kind, rerr := Resolve(mode)
	line := func(k string, avail error, what string) string {
		switch {
		case k == kind:
			return fmt.Sprintf("%s: in force (%s)", k, what)
		case avail != nil:
			return fmt.Sprintf("%s: not available: %v", k, avail)
		case mode == Auto || mode == "":
			return fmt.Sprintf("%s: available (%s), not used: bwrap comes first", k, what)
		default:
			return fmt.Sprintf("%s: available (%s), not used: the loop file says `sandbox: %s`", k, what, mode)
		}
	}
	out = kindLines(line)
	switch {
	case kind == Off:
		out = append(out, "off: in force: the loop file says `sandbox: off`; agents run unconfined")
	case rerr != nil:
		out = append(out, "off: not chosen: "+rerr.Error())
	default:
		out = append(out, "off: not used: write `sandbox: off` in the loop file to run agents unconfined")
	}
	return out
}

// Wrap returns the program, arguments and extra environment to start instead
// of path and args so that the process runs under p. extraEnv must come after
// the rest of the command's environment. A bare program name is looked up in
// PATH now, as exec.Command would.
func (p Policy) Wrap(path string, args []string) (newPath string, newArgs []string, extraEnv []string, err error) {
	if p.Kind == Off {
		return path, args, nil, nil
	}
	if p.Kind != Bwrap && p.Kind != Landlock && p.Kind != Seatbelt {
		return "", nil, nil, fmt.Errorf("sandbox: kind %q is not known (bwrap, landlock, seatbelt or off)", p.Kind)
	}
	if !filepath.IsAbs(p.Dir) {
		return "", nil, nil, fmt.Errorf("sandbox: the loop folder %q is not an absolute path", p.Dir)
	}
	dir, err := canonical(p.Dir)
	if err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: the loop folder: %w", err)
	}
	if !strings.Contains(path, "/") {
		lp, err := exec.LookPath(path)
		if err != nil {
			return "", nil, nil, err
		}
		path = lp
	}
	if p.Kind == Seatbelt {
		return p.wrapSeatbelt(dir, path, args)
	}
	if p.Kind == Bwrap && (len(p.Layers) > 0 || p.Net != nil) {
		// The network namespace and its relay are the layer helper's too.
		return p.wrapLayered(dir, path, args)
	}
	q := Policy{Kind: p.Kind, Dir: dir, Writable: existing(p.Writable), ReadOnly: existing(p.ReadOnly), Hidden: p.Hidden, Masked: p.Masked, Net: p.Net, Slot: p.Slot, View: p.View, Shown: existing(p.Shown)}
	if p.Kind == Bwrap {
		return q.wrapBwrap(path, args)
	}
	return q.wrapLandlock(path, args)
}

// wrapLayered is bwrap under the layer helper (layerMain): the layers are
// laid in a mount namespace of its own, then bubblewrap runs there. dir is
// p.Dir, canonical. Read-only paths inside a layered target are left out
// (the engine judges the layer), before anything resolves them.
func (p Policy) wrapLayered(dir, path string, args []string) (string, []string, []string, error) {
	exe, err := nshelper.Path()
	if err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: %w", errNoExe)
	}
	layers := make([]Layer, 0, len(p.Layers))
	var targets []string
	for _, l := range p.Layers {
		t, err := canonical(l.Target)
		if err != nil {
			continue // a tree that does not exist has nothing to layer
		}
		if fi, err := os.Stat(t); err != nil || !fi.IsDir() {
			continue // a single file stays a plain writable path
		}
		for _, d := range append([]string{l.Upper, l.Work}, l.Lower...) {
			if strings.ContainsAny(d, ",:\\") {
				return "", nil, nil, fmt.Errorf("sandbox: the layer folder %q holds a comma, colon or backslash, which overlayfs cannot be given", d)
			}
		}
		// Lower: finished runs' layers laid under this run's own, so that it
		// sees their work while the folder stays as it was (parallel runs).
		layers = append(layers, Layer{Target: t, Upper: l.Upper, Work: l.Work, Lower: l.Lower})
		targets = append(targets, t, filepath.Clean(l.Target))
	}
	var ro []string
	for _, r := range p.ReadOnly {
		inside := false
		for _, t := range targets {
			inside = inside || Within(filepath.Clean(r), t)
		}
		if !inside {
			ro = append(ro, r)
		}
	}
	q := Policy{Kind: Bwrap, Dir: dir, Writable: existing(p.Writable), ReadOnly: existing(ro), Hidden: p.Hidden, Masked: p.Masked, Slot: p.Slot, View: p.View, Shown: existing(p.Shown)}
	if p.HomeMask {
		q.buildHomeLayers(layers, path)
	}
	bw, bargs, extra, err := q.wrapBwrap(path, args)
	if err != nil {
		return "", nil, nil, err
	}
	if uid := os.Getuid(); uid != 0 {
		// The layer helper is root in its user namespace; the agent is the
		// user again, as it would be without the layer.
		bargs = append([]string{"--uid", strconv.Itoa(uid), "--gid", strconv.Itoa(os.Getgid())}, bargs...)
	}
	s := layerSpec{Stage: 1, Layers: layers, Exec: bw, Args: bargs}
	if p.Net != nil {
		s.Net = &nshelper.Net{Socket: p.Net.Socket, Port: p.Net.Port}
	}
	spec, err := json.Marshal(s)
	if err != nil {
		return "", nil, nil, err
	}
	extra = append(extra, p.Net.Env()...)
	helper := EnvLayers + "=" + string(spec)
	if p.Box && len(layers) > 0 && runBoxesOn() {
		// The loop's run box serves it (agent.Run), or, where it cannot,
		// this helper.
		if b := boxRun(layers, targets, bargs, path, args, p.Net, exe, []string{helper}); b != "" {
			return b, nil, extra, nil
		}
	}
	return exe, nil, append(extra, helper), nil
}

// Unenforced lists the read-only paths of p that its kind cannot keep
// read-only: for landlock, those inside Dir (the engine's restore after the
// run protects them); for off, all of them.
func (p Policy) Unenforced() []string {
	switch p.Kind {
	case Bwrap, Seatbelt:
		return nil
	case Off:
		return existing(p.ReadOnly)
	}
	dir, err := canonical(p.Dir)
	if err != nil {
		return existing(p.ReadOnly)
	}
	var out []string
	for _, r := range existing(p.ReadOnly) {
		if Within(r, dir) {
			out = append(out, r)
		}
	}
	return out
}

// canonical makes path absolute with symlinks resolved; it must exist.
func canonical(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// existing returns the canonical forms of the paths that exist, without
// duplicates, shortest first (a parent before what is inside it).
func existing(paths []string) []string { return existingWith(paths, canonical) }

// existingWith is existing with canon as the resolver (macOS's profile
// takes one a test can give).
func existingWith(paths []string, canon func(string) (string, error)) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		c, err := canon(p)
		if err != nil || seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, c)
	}
	sortByDepth(out)
	return out
}

func sortByDepth(paths []string) {
	sort.SliceStable(paths, func(i, j int) bool {
		di, dj := strings.Count(paths[i], "/"), strings.Count(paths[j], "/")
		if di != dj {
			return di < dj
		}
		return paths[i] < paths[j]
	})
}

// Within says whether path is root or inside it (both clean).
func Within(path, root string) bool {
	if root == "/" {
		return true
	}
	return path == root || strings.HasPrefix(path, root+"/")
}

var errNoExe = errors.New("cannot find the running executable to re-execute as the sandbox helper")
