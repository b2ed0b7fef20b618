//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/sandbox/nshelper"
	"golang.org/x/sys/unix"
)

// A View runs a command (not an agent: the engine's own checks) in a
// copy-on-write view of a tree: the tree as it is, with some files removed
// and others placed, at its own path. What the command writes lands in the
// view's layer and is gone with it; the tree itself is never written. The
// clean room that decides DONE is a view: the final tree with the test
// files an agent added removed and the holdout tests placed.
type View struct {
	Layer Layer      // Target is the tree; Upper and Work a scratch layer the caller owns
	Hide  []string   // paths relative to Target removed from the view
	Put   []ViewFile // files placed in the view
	// Cover are paths outside the tree (absolute) shown empty to the
	// command: a folder as an empty one, a file as an empty file (the
	// repository folders of a loop whose git holds holdout files).
	Cover []string
}

// ViewFile is one file placed in a view: the content of From (a file
// outside the tree) at To (relative to the tree), with Mode.
type ViewFile = nshelper.ViewFile

// Command returns the program, its arguments and the one environment entry
// that run argv with its working folder dir (inside the tree) in the view.
// The caller empties the layer (ClearLayer) before and after. The program
// is this binary: its init function lays the view in a mount namespace of
// its own and executes argv there.
func (v View) Command(argv []string, dir string) (prog string, args []string, env string, err error) {
	if len(argv) == 0 {
		return "", nil, "", errors.New("no command")
	}
	exe, err := nshelper.Path()
	if err != nil {
		return "", nil, "", errNoExe
	}
	s := layerSpec{Stage: 1, Layers: []Layer{v.Layer}, Exec: argv[0], Args: argv[1:], Dir: dir, Put: v.Put, Cover: v.Cover}
	for _, h := range v.Hide {
		s.Hide = append(s.Hide, filepath.Join(v.Layer.Target, filepath.FromSlash(h)))
	}
	for i := range s.Put {
		s.Put[i].To = filepath.Join(v.Layer.Target, filepath.FromSlash(s.Put[i].To))
	}
	data, err := json.Marshal(s)
	if err != nil {
		return "", nil, "", err
	}
	return exe, nil, EnvLayers + "=" + string(data), nil
}

// PlaceInLayer puts a file holding data at rel in a layer's upper folder
// (the folders on its way plain folders of the same mode as the target's),
// over whatever the target holds there: whoever works on the layer finds
// it instead (a folder of the target below it is hidden whole). ApplyLayer
// then finds it like a written file: the caller refuses it.
func PlaceInLayer(l Layer, rel string, data []byte) error {
	parts := strings.Split(rel, "/")
	cur := ""
	for _, p := range parts[:len(parts)-1] {
		cur = joinRel(cur, p)
		fi, err := os.Lstat(filepath.Join(l.Target, filepath.FromSlash(cur)))
		if err != nil || !fi.IsDir() {
			return fmt.Errorf("place %s: %s is not a folder", rel, cur)
		}
		if err := os.Mkdir(filepath.Join(l.Upper, filepath.FromSlash(cur)), fi.Mode().Perm()); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("place %s: %w", rel, err)
		}
	}
	w := filepath.Join(l.Upper, filepath.FromSlash(rel))
	if err := os.RemoveAll(w); err != nil {
		return fmt.Errorf("place %s: %w", rel, err)
	}
	if err := os.WriteFile(w, data, 0o444); err != nil {
		return fmt.Errorf("place %s: %w", rel, err)
	}
	return nil
}

// HideInLayer hides files of a layer's target from whoever works on the
// layer: each becomes an overlayfs whiteout in the upper folder (the
// folders on its way plain folders of the same mode), so that it can be
// neither read nor listed. ApplyLayer then finds the whiteouts like a
// removal: the caller refuses them.
func HideInLayer(l Layer, rels []string) error {
	for _, rel := range rels {
		parts := strings.Split(rel, "/")
		cur := ""
		for _, p := range parts[:len(parts)-1] {
			cur = joinRel(cur, p)
			fi, err := os.Lstat(filepath.Join(l.Target, filepath.FromSlash(cur)))
			if err != nil || !fi.IsDir() {
				return fmt.Errorf("hide %s: %s is not a folder", rel, cur)
			}
			if err := os.Mkdir(filepath.Join(l.Upper, filepath.FromSlash(cur)), fi.Mode().Perm()); err != nil && !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("hide %s: %w", rel, err)
			}
		}
		w := filepath.Join(l.Upper, filepath.FromSlash(rel))
		os.Remove(w)
		if err := unix.Mknod(w, unix.S_IFCHR, 0); err != nil {
			return fmt.Errorf("hide %s: %w", rel, err)
		}
	}
	return nil
}
