// Package nshelper is the sandbox's layer helper: the code that runs in a
// re-executed copy of the engine's binary to lay copy-on-write layers in a
// mount namespace of its own (and, for an agent, a network namespace with
// the relay to the loop's proxy), then runs bubblewrap there.
//
// It is a package of its own, with only the standard library,
// golang.org/x/sys/unix and the relay below it, so that its init function
// runs before the engine's other packages are initialized: the helper's
// start costs the Go runtime's start and little more, however large the
// binary that serves as the helper. Package sandbox imports it, so every
// binary that imports sandbox can serve as the helper; sandbox writes the
// Spec, this package reads it.
package nshelper

import "os"

// A Layer is a copy-on-write view of the tree Target: inside the sandbox
// the agent sees Target, but everything it writes there (new and changed
// files, removals as whiteouts, opaque folders) lands in Upper, an
// overlayfs upper folder the engine owns; Work is overlayfs's work folder
// on the same file system as Upper. Target itself is never written while
// the agent runs. After the run the engine reads Upper, the exact list of
// what the run changed, and applies what it accepts (sandbox.ApplyLayer)
// or keeps it for the next run of the same loop without ever applying it
// (the agent's HOME and caches).
type Layer struct {
	Target string `json:"target"`
	Upper  string `json:"upper"`
	Work   string `json:"work"`
	// Lower are more read-only folders laid over Target under Upper, the
	// first uppermost (a check box's setup layer).
	Lower []string `json:"lower,omitempty"`
	// Volatile: what is written is thrown away, so the layer is mounted
	// without syncs (overlayfs's volatile: its unmount does not write out
	// the whole file system Upper is on, which costs milliseconds to
	// seconds on a busy machine).
	Volatile bool `json:"volatile,omitempty"`
	// Built: Target's view is built, not subtracted (HOME). No entry of
	// Target is laid under Upper but the paths Keep names (absolute,
	// inside Target) and the folders on their way: a kept folder is a
	// layer of its own over the real one, its upper folder inside Upper;
	// a kept file is a copy (a large one, a socket: the real one, bound
	// read-only). Whatever else Target holds, whenever it was made, does
	// not exist in the view; what the run writes still lands in Upper.
	Built bool     `json:"built,omitempty"`
	Keep  []string `json:"keep,omitempty"`
	// Base, for a Built layer, is its base made already (MakeBase): a box's
	// server makes it once for all its checks.
	Base string `json:"base,omitempty"`
	// From, when set, is the folder read as the layer's lowest instead of
	// Target (a box's server: Target bound aside, with no mount inside it;
	// overlayfs refuses a lower folder holding a mount it may not reveal).
	From string `json:"from,omitempty"`
	// KeepFrom, for a Built layer, are kept folders (as in Keep) read
	// through another folder, as From.
	KeepFrom map[string]string `json:"keep_from,omitempty"`
}

// ViewFile is one file placed in a view: the content of From (a file
// outside the tree) at To (relative to the tree), with Mode.
type ViewFile struct {
	From string      `json:"from"`
	To   string      `json:"to"`
	Mode os.FileMode `json:"mode"`
}

// Net is an agent run's network namespace: the relay on 127.0.0.1:Port
// to the proxy's unix socket Socket (none when either is empty).
type Net struct {
	Socket string `json:"socket,omitempty"`
	Port   int    `json:"port,omitempty"`
}

// EnvLayers marks a process started for bwrap with layers: this package's
// init function lays them in a mount namespace of its own and executes
// bubblewrap there (layerMain).
const EnvLayers = "LOOPRINTER_SANDBOX_LAYERS"

// EnvCheckLayers marks a process started by a bwrap check box: this
// package's init function lays the check's layers and runs bubblewrap
// (checkLayerMain).
const EnvCheckLayers = "LOOPRINTER_SANDBOX_CHECK_LAYERS"

// Spec is what the layer helper needs.
type Spec struct {
	Stage  int      `json:"stage"` // 1: start stage 2 in new namespaces; 2: mount and exec
	Layers []Layer  `json:"layers"`
	Exec   string   `json:"exec"`   // bubblewrap
	Args   []string `json:"args"`   // its arguments
	UserNS bool     `json:"userns"` // stage 2 runs in a user namespace of its own
	// A view: once the layers are laid, stage 2 changes to Dir, removes
	// Hide and places Put in the layered tree, then executes Exec.
	Dir  string     `json:"dir,omitempty"`
	Hide []string   `json:"hide,omitempty"`
	Put  []ViewFile `json:"put,omitempty"`
	// Cover are paths outside the view's tree shown empty.
	Cover []string `json:"cover,omitempty"`
	// Root is the tree Hide and Put are in (default: the first layer's
	// target, before the layers are sorted).
	Root string `json:"root,omitempty"`
	// FD3: stage 1 passes its descriptor 3 on to stage 2, which leaves it
	// open for Exec (a check box's bubblewrap --info-fd).
	FD3 bool `json:"fd3,omitempty"`
	// Net: stage 2 runs in a network namespace of its own (loopback
	// only), serves the relay to the proxy there, and starts bubblewrap as
	// its child instead of becoming it.
	Net *Net `json:"net,omitempty"`
}
