package judge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// CheckRequest asks the judge for one run of checks: what they run on,
// what of it they see, what runs before them, how they are confined and
// where their output goes. Check is the one way to run checks; every
// gate, the clean room, the holdout checks, an attempt of a best-of, a
// landing's merged tree build a CheckRequest.
type CheckRequest struct {
	// Loop is the loop file in force: the checks' sandbox, network,
	// timeout and test summaries.
	Loop *spec.Loop
	// Tree is the folder the checks run on (the loop folder, a copy of it,
	// a merged tree); "" is Loop.Dir.
	Tree string
	// Cmds are the checks, run in order.
	Cmds []string
	// Remove are paths relative to Tree out of the checks' view (the
	// holdout files, what the clean room sets aside); HideDirs are more
	// folders the checks do not see (a repository that holds the holdout
	// files: see Judge.HiddenGit).
	Remove, HideDirs []string
	// Put are files laid into the view (From a file outside, To a path
	// relative to Tree).
	Put []sandbox.ViewFile
	// Lower, when not "", is an upper folder of a copy-on-write layer laid
	// over Tree under the box's own (an attempt of a best-of); where no
	// bwrap box lays it, it is applied to a copy of Tree.
	Lower string
	// Room: the checks never run in Tree itself (the clean room): where no
	// bwrap box lays a view, they get a copy of it.
	Room bool
	// Setup, when not empty, runs first in the box (its writes stay for
	// the box's checks, never the tree): the loop's `setup:` rebuilding
	// the dependencies an agent changed; a setup that fails fails every
	// check.
	Setup []string
	// Env is the checks' environment.
	Env []string
	// Cache is the trusted cache layer laid under every check (nil: the
	// loop's, the warm-up's while it runs).
	Cache *sandbox.CheckCache
	// Proxy is the way out of `checks.network: {allow: [...]}` (nil: the
	// loop's proxy, started on the first check that needs it).
	Proxy *sandbox.Network
	// Redactor redacts what the checks print before anything reads it.
	Redactor *redact.Redactor
	// LogPath is where check i's whole output is saved (setup i's at
	// LogPath(-1-i)).
	LogPath func(i int) string
	// Note, when not nil, is told once per process and loop what the
	// checks give up of the loop's confinement.
	Note func(string)
	// Unconfined runs the checks as this process's user in Tree itself:
	// only `setup:` at the loop's start, before any agent ran, whose
	// writes must reach the folder.
	Unconfined bool

	// around is the git work tree around Tree (workTreeAround): shown
	// read-only beneath the tree's layer; "" for a copy, which has none.
	around string
	// nested are the paths inside Tree that other loops' folders inside
	// it keep from its checks (OtherLoopSecretsIn), found before a copy;
	// others the loop folders around it (treeList.around).
	nested []string
	others []sandbox.OtherLoop
	// served is the box whose server runs the checks (one bubblewrap
	// for all of them), nil when each is a process of its own.
	served *sandbox.CheckBox
	// box is the box the checks run in, for their CPU (Usage); nil
	// unconfined.
	box *sandbox.CheckBox
}

// Check runs the checks of r and returns their results, in order, until
// the context ends. A check that cannot be confined fails closed.
func Check(ctx context.Context, r CheckRequest) []CheckResult {
	if len(r.Cmds) == 0 {
		return nil
	}
	if r.Tree == "" {
		r.Tree = r.Loop.Dir
	}
	if r.Unconfined {
		return runInOrder(ctx, nil, &r, nil)
	}
	if r.Cache == nil {
		r.Cache = checkCacheFor(ctx, r.Loop, r.Tree) // before a copy: the warm-up's is the loop folder's
	}
	r.around = workTreeAround(r.Tree) // before a copy replaces the tree
	r.listOthers()
	kind, why := checkKind(r.Loop)
	r.note(why)
	if r.needsCopy(kind) {
		done, err := r.toCopy()
		if err != nil {
			return failAll(r.Cmds, r.LogPath, err.Error())
		}
		defer done()
		r.around = "" // a copy has no work tree around it: what it names there, it cannot see, and fails
	}
	return r.inBox(ctx, kind)
}

// listOthers finds, with one listing of the work tree, the other loops'
// folders around r's tree and what those inside it keep from its checks.
func (r *CheckRequest) listOthers() {
	tree := canonicalOr(r.Tree)
	top := r.around
	if top == "" {
		if top = gitTop(tree); top == "" {
			return
		}
	}
	l := listTree(canonicalOr(top))
	r.nested = l.secretsIn(tree)
	if r.around != "" {
		r.others = l.around(tree, canonicalOr(r.Loop.Dir))
	}
}

// note tells r.Note why once per process and loop.
func (r *CheckRequest) note(why string) {
	if why == "" || r.Note == nil {
		return
	}
	if _, seen := warnedKinds.LoadOrStore(r.Loop.Dir+"\x00"+why, true); !seen {
		r.Note(why)
	}
}

// needsCopy says whether the checks need a copy of the tree: only a bwrap
// box lays a view with paths removed or placed or a layer under it.
func (r *CheckRequest) needsCopy(kind string) bool {
	return kind != sandbox.Bwrap && (r.Room || len(r.Remove) > 0 || len(r.Put) > 0 || r.Lower != "")
}

// toCopy makes a copy of r's tree as its view would show it and points r
// at it; done removes it.
func (r *CheckRequest) toCopy() (done func(), err error) {
	base := ""
	if p := loopdir.PrivateOf(r.Loop.Dir); dirExists(string(p)) {
		base = p.CheckScratch()
		os.MkdirAll(base, 0o700)
	}
	tmp, err := os.MkdirTemp(base, "looprinter-checks-")
	if err != nil {
		return nil, fmt.Errorf("the checks' copy of the tree cannot be made: %w", err)
	}
	done = func() { os.RemoveAll(tmp) }
	cp := filepath.Join(tmp, filepath.Base(r.Tree))
	skip := map[string]bool{loopdir.RecordsDir: true}
	if rel, err := filepath.Rel(r.Tree, tmp); err == nil && !strings.HasPrefix(rel, "..") {
		skip[filepath.ToSlash(rel)] = true // the copy never copies itself
	}
	for _, p := range r.Remove {
		skip[filepath.ToSlash(p)] = true
	}
	tree := canonicalOr(r.Tree)
	for _, n := range r.nested {
		if rel, err := filepath.Rel(tree, n); err == nil && !strings.HasPrefix(rel, "..") {
			skip[filepath.ToSlash(rel)] = true // other loops' secrets never copied
		}
	}
	if err := layCopy(r, cp, skip); err != nil {
		done()
		return nil, err
	}
	r.Tree, r.Remove, r.Put, r.Lower, r.nested, r.others = cp, nil, nil, "", nil, nil
	return done, nil
}

// layCopy copies r's tree to cp without skip, with r's files placed and
// its lower layer applied.
func layCopy(r *CheckRequest, cp string, skip map[string]bool) error {
	if err := sandbox.CopyTree(r.Tree, cp, skip); err != nil {
		return fmt.Errorf("the checks' copy of the tree cannot be made: %w", err)
	}
	for _, f := range r.Put {
		to := filepath.Join(cp, filepath.FromSlash(f.To))
		os.MkdirAll(filepath.Dir(to), 0o755)
		if err := sandbox.CopyFile(f.From, to, f.Mode); err != nil {
			return fmt.Errorf("the checks' copy of the tree cannot be made: %w", err)
		}
	}
	if r.Lower != "" {
		if err := layOnto(r.Lower, cp, skip); err != nil {
			return fmt.Errorf("the attempt's layer cannot be laid on the copy of the tree: %w", err)
		}
	}
	return nil
}

// boxOptions are the options of r's check box of kind.
func (r *CheckRequest) boxOptions(ctx context.Context, kind string) sandbox.CheckBoxOptions {
	o := boxOptions(r.Loop, r.Tree, r.HideDirs)
	// Other loops' folders around the tree show what git tracks, nothing
	// else (the boundary); the secrets their engines listed are masked
	// too (defence in depth).
	o.Around, o.AroundMasked = r.around, loopdir.OtherSecrets(r.Loop.Dir)
	o.AroundLoops = r.others
	o.TreeMasked = r.nested
	o.Kind, o.Remove, o.Put, o.Env = kind, r.Remove, r.Put, r.Env
	if kind == sandbox.Bwrap {
		o.Over = pyGuardOver(r.Env, r.Loop.Dir)
	}
	o.View.AllowRead = append(o.View.AllowRead, programFolders(r.Tree, r.Setup, r.Cmds)...)
	if o.Cache = r.Cache; o.Cache != nil && o.Cache.Warm {
		noteWarmTree(ctx, r.Tree) // the loop folder, or a copy of it
	}
	if r.Lower != "" {
		o.Lower = []string{r.Lower}
	}
	return o
}

// inBox runs r's setup, then its checks, in a check box of kind over r's
// tree. The box is built with the proxy of `checks.network: {allow: [...]}`
// (CheckBoxOptions.Proxy); a failing check whose output names a path
// outside the box's view says so (WithViewHint).
func (r *CheckRequest) inBox(ctx context.Context, kind string) []CheckResult {
	proxy, nwhy, err := checksProxy(r, kind)
	if err != nil {
		return failAll(r.Cmds, r.LogPath, "the checks' network proxy cannot start: "+err.Error())
	}
	r.note(nwhy)
	o := r.boxOptions(ctx, kind)
	o.Proxy = proxy
	box, err := sandbox.NewCheckBox(o)
	if err != nil {
		return failAll(r.Cmds, r.LogPath, "the checks' sandbox cannot be made: "+err.Error())
	}
	defer box.Close()
	r.box = box
	for i, c := range r.Setup {
		res := WithViewHint(box, r.Env, runCheck(ctx, box.SetupCommand, r, c, r.LogPath(-1-i)))
		if !res.Pass {
			return failAll(r.Cmds, r.LogPath, fmt.Sprintf("setup `%s` failed in the checks' sandbox (exit %d), rebuilding the dependencies the agent changed: %s", c, res.ExitCode, res.Signal))
		}
	}
	if box.Serves(r.Env) {
		r.served = box
	}
	// The Go accounting's wrapper, in the clean room (goaccount.go).
	return runInOrder(ctx, accountedStarter(ctx, box.Command), r, box)
}

// runInOrder runs r's checks in order with start, until the context ends;
// box, when not nil, is the box they run in (for WithViewHint).
func runInOrder(ctx context.Context, start Starter, r *CheckRequest, box *sandbox.CheckBox) []CheckResult {
	var out []CheckResult
	for i, c := range r.Cmds {
		out = append(out, WithViewHint(box, r.Env, runCheck(ctx, start, r, c, r.LogPath(i))))
		if ctx.Err() != nil {
			break
		}
	}
	return out
}

// request is a request for cmds over the loop folder with hide (paths
// relative to it) out of the checks' view, the repository too when git
// holds holdout files, in the judge's environment, noting what the checks
// give up of the loop's confinement.
func (j *Judge) request(hide, cmds []string, logPath func(int) string) CheckRequest {
	l := j.spec()
	remove, dirs := j.gitHidden(hide)
	return CheckRequest{Loop: l, Tree: j.Dir, Cmds: cmds, Remove: remove, HideDirs: dirs,
		Env: j.checkEnv(), Redactor: j.redactor(l), LogPath: logPath, Note: j.noteConfinement}
}
