//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"runtime"

	"github.com/looprinter/looprinter/sandbox/nshelper"
)

// Copy-on-write layers are overlayfs in a mount namespace: Linux only.
// Elsewhere LayerProbe says so and the engine never lays one; the rest of
// the API only keeps the callers building. The types mirror layer.go's.

// A Layer is a copy-on-write view of the tree Target (see nshelper.Layer).
type Layer = nshelper.Layer

// EnvLayers marks the layer helper (see layer.go); unused here.
const EnvLayers = nshelper.EnvLayers

// layerSpec is what the layer helper needs (see layer.go).
type layerSpec = nshelper.Spec

// A LayerChange is one path of a layer as ApplyLayer judged it.
type LayerChange struct {
	Path     string
	What     string
	Applied  bool
	Why      string
	Stripped string
}

var errNoLayers = errors.New("copy-on-write layers need Linux (overlayfs in a mount namespace); this is " + runtime.GOOS)

// LayerProbe says why copy-on-write layers cannot be made here: always.
func LayerProbe() error { return errNoLayers }

// PrepareLayer fails: there are no layers here.
func PrepareLayer(Layer) (bool, error) { return false, errNoLayers }

// ClearLayer fails: there are no layers here.
func ClearLayer(Layer) error { return errNoLayers }

// ClearWork fails: there are no layers here.
func ClearWork(Layer) error { return errNoLayers }

// ApplyLayer fails: there are no layers here.
func ApplyLayer(Layer, func(rel string) bool, string) ([]LayerChange, error) { return nil, errNoLayers }

// ResumeApply finds nothing: there are no layers here.
func ResumeApply(Layer, string) ([]LayerChange, bool, error) { return nil, false, nil }

// A View runs a command in a copy-on-write view of a tree (see view.go);
// there are no views here.
type View struct {
	Layer Layer
	Hide  []string
	Put   []ViewFile
	Cover []string
}

// ViewFile is one file placed in a view (see view.go).
type ViewFile = nshelper.ViewFile

// Command fails: there are no views here.
func (v View) Command(argv []string, dir string) (string, []string, string, error) {
	return "", nil, "", errNoLayers
}

// HideInLayer fails: there are no layers here.
func HideInLayer(Layer, []string) error { return errNoLayers }

// PlaceInLayer fails: there are no layers here.
func PlaceInLayer(Layer, string, []byte) error { return errNoLayers }

// Opaque is false: there are no layers here.
func Opaque(string) bool { return false }

// LayerEntry is one path an upper folder changes in its target.
type LayerEntry struct {
	Rel  string
	What string
	Mode os.FileMode
}

// LayerEntries: no layers here.
func LayerEntries(string) ([]LayerEntry, error) { return nil, errNoLayers }

func (q *Policy) buildHomeLayers([]Layer, string) {}

// ClearRunWork fails: there are no layers here.
func ClearRunWork(Layer) error { return errNoLayers }
