package sandbox

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Networks a check may get (the loop file's `checks.network`).
const (
	// CheckNetworkNone: a network namespace of the check's own with only
	// loopback (bwrap); TCP bind and connect refused (Landlock ABI 4+).
	CheckNetworkNone = "none"
	// CheckNetworkHost: the host's network, its loopback services included.
	CheckNetworkHost = "host"
	// checkNetworkAllow is the loop file's `checks.network: {allow: […]}`,
	// as the reports name it: a box without the network (None) whose checks
	// the judge sends through its proxy (CheckBoxOptions.Proxy).
	checkNetworkAllow = "allow"
)

// CheckBoxOptions say how the checks of one box run. A box is the judge's
// own sandbox: it never shares a layer, a folder or a namespace with the
// agent's.
type CheckBoxOptions struct {
	// Kind is a resolved kind (see Resolve): Bwrap, Landlock or Off.
	// Seatbelt is not a check sandbox yet: NewCheckBox refuses it.
	Kind string
	// Tree is the folder the checks run in (the loop folder, or the clean
	// room's copy of it); absolute. Under bwrap a check sees it as it is and
	// writes to a throw-away layer; under Landlock it is read-only.
	Tree string
	// Remove are paths relative to Tree that checks do not see, and Put are
	// files placed in their view of it (bwrap with overlayfs only: under
	// Landlock and off the caller gives a prepared copy as Tree).
	Remove []string
	Put    []ViewFile
	// Lower are folders laid over Tree under every check's throw-away
	// layer, the first uppermost (bwrap only): a finished run's upper
	// folder, so that its checks see the tree as the run left it while
	// the tree itself stays as it is. Whiteouts and replaced folders in
	// them hide what Tree holds.
	Lower []string
	// Hide are folders checks cannot read: the engine's state root, other
	// loops' folders. Under bwrap each is an empty tmpfs (Tree stays
	// visible when it lies inside one); under Landlock they are left out of
	// the read rules. Missing ones are skipped.
	Hide []string
	// Around is the work tree Tree lies in (a loop in a sub-folder of its
	// repository, the landing's merged tree): shown read-only beneath the
	// tree, so that a check reading `../other` sees the tree it judges,
	// wherever it lives (/tmp and /var/tmp are fresh folders in the view).
	// "" or Tree itself: nothing more. Hide and AroundMasked stay out of it.
	Around string
	// AroundMasked are paths inside Around checks do not see (other loops'
	// records and holdout files).
	AroundMasked []string
	// AroundLoops are the other loops' folders inside Around (and above
	// Tree): each is shown with the entries git tracks and nothing else
	// (see OtherLoop), whatever AroundMasked says.
	AroundLoops []OtherLoop
	// TreeMasked are paths inside Tree checks do not see (the records
	// folders and ignored files of other loops' folders inside it): under
	// bwrap each reads as empty; under Landlock the tree is granted around
	// them (a setup, which writes the tree, still reads them).
	TreeMasked []string
	// Views are files or folders outside Tree that checks of this box see
	// read-only although they lie inside a hidden folder (the holdout files
	// kept in the engine's private folder).
	Views []string
	// Over are files of the engine's laid read-only over paths of the
	// machine in every check's view (bubblewrap only; see OverFile):
	// under Landlock and off no file can be laid, and the caller reaches
	// the checks another way.
	Over []OverFile
	// Network is CheckNetworkNone (the default when empty) or
	// CheckNetworkHost.
	Network string
	// SetupNetwork is the network of SetupCommand: CheckNetworkHost (the
	// default when empty: a setup downloads from the package registries)
	// or CheckNetworkNone.
	SetupNetwork string
	// Env is the environment HOME and the caches are read from (default:
	// this process's).
	Env []string
	// Scratch is where the box keeps its throw-away layers and folders
	// (default: the system's temporary folder); each box makes a folder of
	// its own there, hidden from its checks, and Close removes it. The
	// judge gives a folder of the loop's private folder: the upper folders
	// of a holdout box hold the holdout files while its checks run, and an
	// agent must not be able to read them (agents see the host's /tmp).
	Scratch string
	// View is what checks see besides the tree and its layers (the
	// loop's sandbox.allow_read and allow_sockets; Env is the check's).
	View ViewSpec
	// Cache is the loop's trusted cache layer (see CheckCache): nil for
	// none.
	Cache *CheckCache
	// Proxy, when set, is the checks' only way out (`checks.network:
	// {allow: [...]}`): each check and setup keeps a network namespace of
	// its own, in which the layer helper runs a relay on 127.0.0.1 to the
	// judge's proxy on Proxy.Socket, and its environment names the relay
	// as its proxy (HTTP_PROXY and the like). A bubblewrap box only, with
	// Network and SetupNetwork none: never more network than that.
	Proxy *Network
}

// A CheckBox runs checks confined: whatever a check's code writes is gone
// when the check ends, and it cannot read the engine's state. Make one per
// judge (NewCheckBox), call Command for every check, Close at the end.
type CheckBox struct {
	opts    CheckBoxOptions
	tree    string      // canonical
	scratch string      // the box's own folder (removed by Close)
	targets []string    // bwrap: the throw-away layers' targets, canonical, none inside another
	hide    []string    // canonical, existing
	views   []string    // canonical, existing
	around  string      // canonical, a folder holding tree; "" for none
	masked  []string    // inside around, existing
	others  []otherView // other loops' folders inside around
	inTree  []string    // masked paths inside tree (TreeMasked), existing
	env     []string
	pending sync.WaitGroup // the housekeeping of ended checks
	usage   usageOf        // the CPU of ended commands, by their cgroups (Usage)
	base    Layer          // bwrap: what setups wrote in the tree, under every check's layer
	// cacheSeed copies, once, the cache layer's Go build cache into a
	// Landlock box's own (checkcache_linux.go).
	cacheSeed    sync.Once
	cacheSeedErr error
	server       *boxServer // bwrap: the box's server, from its first check run by Run
}

// Kind is the kind in force for the box's checks.
func (b *CheckBox) Kind() string { return b.opts.Kind }

// Network is the network the box's checks get.
func (b *CheckBox) Network() string { return b.opts.Network }

// NewCheckBox checks the options and prepares the box's folder.
func NewCheckBox(o CheckBoxOptions) (*CheckBox, error) {
	switch o.Network {
	case "":
		o.Network = CheckNetworkNone
	case CheckNetworkNone, CheckNetworkHost:
	default:
		return nil, fmt.Errorf("sandbox: checks network %q is not known (none or host)", o.Network)
	}
	switch o.SetupNetwork {
	case "":
		o.SetupNetwork = CheckNetworkHost
	case CheckNetworkNone, CheckNetworkHost:
	default:
		return nil, fmt.Errorf("sandbox: setup network %q is not known (none or host)", o.SetupNetwork)
	}
	switch o.Kind {
	case Bwrap, Landlock, Off:
	case Seatbelt:
		return nil, errors.New("sandbox: checks cannot be confined by seatbelt yet: choose bwrap, landlock or off")
	default:
		return nil, fmt.Errorf("sandbox: kind %q is not known (bwrap, landlock or off)", o.Kind)
	}
	if !filepath.IsAbs(o.Tree) {
		return nil, fmt.Errorf("sandbox: the checks' tree %q is not an absolute path", o.Tree)
	}
	tree, err := canonical(o.Tree)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the checks' tree: %w", err)
	}
	if o.Kind != Bwrap && len(o.Lower) > 0 {
		return nil, fmt.Errorf("sandbox: a view of the tree with a layer laid over it needs bwrap; under %s give a prepared copy as the tree", o.Kind)
	}
	if o.Kind != Bwrap && (len(o.Remove) > 0 || len(o.Put) > 0) {
		return nil, fmt.Errorf("sandbox: a view of the tree with files removed or placed needs bwrap; under %s give a prepared copy as the tree", o.Kind)
	}
	for _, r := range o.Remove {
		if filepath.IsAbs(r) || r == ".." || strings.HasPrefix(filepath.ToSlash(r), "../") {
			return nil, fmt.Errorf("sandbox: %q is not a path inside the checks' tree", r)
		}
	}
	if err := checkProxy(o); err != nil {
		return nil, err
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	b := &CheckBox{opts: o, tree: tree, env: o.Env, hide: existing(o.Hide), views: existing(o.Views)}
	b.around, b.masked = aroundOf(o.Around, tree, o.AroundMasked)
	b.others = planOthers(o.AroundLoops, b.around, tree)
	b.masked = outsideOthers(b.masked, b.others, tree)
	for _, m := range existing(o.TreeMasked) {
		if Within(m, tree) && m != tree {
			b.masked = append(b.masked, m)
			b.inTree = append(b.inTree, m)
		}
	}
	if o.Kind == Off {
		return b, nil
	}
	if err := b.prepare(); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// checkProxy refuses a proxy the box cannot confine its checks to: one
// that is not running, a box that is not bubblewrap's, a box whose checks
// or setups have the host's network.
func checkProxy(o CheckBoxOptions) error {
	n := o.Proxy
	if n == nil {
		return nil
	}
	if n.Socket == "" || n.Port == 0 {
		return errors.New("sandbox: the checks' proxy is not running")
	}
	if o.Kind != Bwrap {
		return errors.New("sandbox: only a bubblewrap check box can reach the network through the judge's proxy")
	}
	if o.Network != CheckNetworkNone || o.SetupNetwork != CheckNetworkNone {
		return errors.New("sandbox: the check has the host's network: it cannot be confined to the judge's proxy")
	}
	return nil
}

// Close removes the box's folder; a box is not used after it.
func (b *CheckBox) Close() error {
	if b == nil || b.scratch == "" {
		return nil
	}
	b.closeServer()
	b.pending.Wait()
	err := removeTree(b.scratch)
	b.scratch = ""
	return err
}

// Unconfined says what the box's checks are NOT kept from, one line each
// (empty when the kind gives everything a check box promises); for the
// reports, `doctor` and the audit.
func (b *CheckBox) Unconfined() []string { return CheckGaps(b.opts.Kind, b.opts.Network) }

// CheckGuarantee says in one line what the checks' own sandbox of kind
// guarantees with network ("" for off); for `looprinter doctor`.
func CheckGuarantee(kind, network string) string {
	net := "no network but a loopback of their own"
	if network == CheckNetworkHost {
		net = "the host's network (checks.network: host)"
	}
	if network == checkNetworkAllow {
		net = "a network of their own whose only way out is the judge's proxy, to the hosts of checks.network.allow (every connection recorded)"
	}
	switch kind {
	case Bwrap:
		return "checks run in a sandbox of the judge's own, never the agent's, in a view built from the loop's manifest (the system, the toolchains, the tree; nothing else of the machine): the tree, HOME and the caches are throw-away copy-on-write layers (nothing a check writes survives it), /tmp, /var/tmp, /run and /dev/shm empty folders of the check's own (no socket of the host's), the engine's state folder, other loops and other projects out of the view, no capabilities, their own PID namespace, " + net + "; every process a check starts ends with it"
	case Landlock:
		if network != CheckNetworkHost && landlockABI() >= 4 {
			net = "no TCP bind or connect"
		} else if network != CheckNetworkHost {
			net = "the host's network (Landlock below ABI 4 has no network rules)"
		}
		return "checks run under a Landlock ruleset of the judge's own: writes only to fresh folders made for the check (HOME, the temporary folder, the caches it may write), the tree and the user's caches read-only, the engine's state folder unreadable, no capabilities, " + landlockUnixNote() + ", " + net
	}
	return ""
}

// CheckGaps says what checks confined by kind with network are not kept
// from, one line each.
func CheckGaps(kind, network string) []string {
	var out []string
	if network == CheckNetworkHost && kind != Off {
		out = append(out, "checks.network is host: a check reaches the host's network and every service on its loopback (databases, the agent API's proxy, other loops' servers); code the agent wrote can send what it reads anywhere")
	}
	switch kind {
	case Bwrap:
		out = append(out, "bubblewrap: programs installed in /tmp, or anywhere outside the manifest, cannot run in a check (name their folder in sandbox.allow_read); a unix socket in the tree stays reachable")
		if network == CheckNetworkHost {
			out = append(out, "bubblewrap with checks.network host: the host's abstract unix sockets (a session bus, an X server) are reachable (the network namespace is the host's)")
		}
		if err := LayerProbe(); err != nil {
			out = append(out, "no copy-on-write layer can be laid here ("+err.Error()+"): checks cannot run in the judge's sandbox")
		}
		if err := CgroupProbe(); err != nil {
			out = append(out, "no cgroup here ("+err.Error()+"): a check's processes are ended with its PID namespace, not by the kernel's list")
		}
	case Landlock:
		abi := landlockABI()
		out = append(out,
			"Landlock: the tree is read-only to a check (no throw-away layer): a runner that writes into it (caches, reports) fails",
			"Landlock: "+landlockUnixGap(),
			"Landlock: HOME, the temporary folder and the caches are fresh empty folders for every check; the module cache is the user's, read-only (a module not downloaded yet cannot be); Go's build cache is the box's own, shared by its checks (a copy of the loop's cache layer's; with Go 1.24 or later it reads the user's build cache too, read-only, through the engine's cache program; what one check's code writes there, a later check of the same box reads)",
			"Landlock: no PID namespace: a check sees the host's processes in /proc",
			"Landlock: the folders on the way to a hidden one (/, HOME…) cannot be listed by a check, and entries made in them after the check starts cannot be read",
		)
		if network != CheckNetworkHost {
			if abi >= 4 {
				out = append(out, "Landlock: TCP bind and connect are refused to every port, loopback included (no network namespace): a check cannot run a local server; UDP is not covered")
			} else {
				out = append(out, fmt.Sprintf("Landlock ABI %d (below 4): checks have the host's network", abi))
			}
		}
		if err := CgroupProbe(); err != nil {
			out = append(out, "no cgroup here ("+err.Error()+"): a daemon a check started (setsid, double fork) can outlive it")
		}
	case Off:
		out = append(out, "checks run unconfined: the agent's code runs at check time with the user's rights, HOME, caches, /tmp, network and the engine's state folder; what it writes stays")
	}
	if network == checkNetworkAllow && kind != Bwrap {
		out = append(out, "checks.network allow needs bubblewrap (the judge's proxy is reached through a relay in each check's network namespace): under "+kind+" it is not in force")
	}
	return out
}

// checkEnv are the entries every confined check gets after the caller's:
// no bytecode written, and a bytecode prefix of its own.
func checkPythonEnv(pycache string) []string {
	return []string{"PYTHONDONTWRITEBYTECODE=1", "PYTHONPYCACHEPREFIX=" + pycache}
}

// lookupEnv is the last value of key in env.
func lookupEnv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// cacheDirs are HOME and the cache folders the environment names (absolute
// ones only), HOME first.
func cacheDirs(env []string) []string {
	get := func(k string) string { return lookupEnv(env, k) }
	var out []string
	for _, k := range []string{"HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "GOCACHE", "GOMODCACHE", "PIP_CACHE_DIR", "npm_config_cache", "NPM_CONFIG_CACHE", "YARN_CACHE_FOLDER", "CARGO_HOME"} {
		if v := get(k); filepath.IsAbs(v) && filepath.Clean(v) != "/" {
			out = append(out, v)
		}
	}
	if v := get("GOPATH"); v != "" {
		for _, p := range filepath.SplitList(v) {
			if filepath.IsAbs(p) && filepath.Clean(p) != "/" {
				out = append(out, p)
			}
		}
	}
	if v := get("GOENV"); filepath.IsAbs(v) && filepath.Dir(v) != "/" {
		out = append(out, filepath.Dir(v))
	}
	return out
}

// nodeFreezeJS is the engine's preload for Node checks: the assertion
// modules frozen before the project's code loads, so that code under test
// cannot replace what a test asserts with (require('node:assert').strictEqual
// = () => {} has no effect; in strict code it throws), and node:test's
// exports frozen on their first require (t.it = … in the library has no
// effect on a test file that calls t.it later). chai and jest's expect are
// not frozen: their plugins extend them.
const nodeFreezeJS = `import a from "node:assert";import s from "node:assert/strict";import M from "node:module";` +
	`Object.freeze(a);Object.freeze(s);Object.freeze(a.strict);` +
	`const l=M._load;M._load=function(r){const x=l.apply(this,arguments);` +
	`if(r==="node:test"&&x&&!Object.isFrozen(x)){Object.freeze(x)}return x}`

// nodeFreeze is the preload as a node option: a data: URL, so that no file
// of the engine needs to be in the check's view.
var nodeFreeze = "--import=data:text/javascript," + url.PathEscape(nodeFreezeJS)

var nodeImportOnce struct {
	sync.Once
	ok bool
}

// nodeHasImport says whether the node on PATH takes --import (18.19+ on 18,
// 20.6+, 21+): an older one would refuse to start with it.
func nodeHasImport() bool {
	nodeImportOnce.Do(func() {
		out, err := exec.Command("node", "--version").Output()
		if err != nil {
			return
		}
		var major, minor int
		if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "v%d.%d", &major, &minor); err != nil {
			return
		}
		nodeImportOnce.ok = major >= 21 || major == 20 && minor >= 6 || major == 18 && minor >= 19
	})
	return nodeImportOnce.ok
}

// CheckNodeOptions is NODE_OPTIONS for a check, given the caller's: the
// engine's preload freezing the assertion modules after the caller's
// options, where the node on PATH takes it (unchanged otherwise).
func CheckNodeOptions(current string) string {
	if !nodeHasImport() || strings.Contains(current, nodeFreeze) {
		return current
	}
	return strings.TrimSpace(current + " " + nodeFreeze)
}
