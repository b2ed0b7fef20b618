//go:build !linux

package guard

import (
	"errors"
	"runtime"
)

// Without inotify there is no treeWatch: newTreeWatch fails, and the
// engine walks the loop folder around every agent run instead (as it does
// on Linux when a watch cannot be set up). The methods keep the callers
// building; none is reached with a watch.

type treeWatch struct{}

// watchTake is what changed between two takes (see watch.go).
type watchTake struct {
	Changed []string
	Created []string
	Gone    []string
	Lost    string
}

func newTreeWatch(string, func(rel, name string) bool) (*treeWatch, error) {
	return nil, errors.New("no inotify on " + runtime.GOOS + ": the loop folder is walked")
}

func (w *treeWatch) close()                  {}
func (w *treeWatch) follow()                 {}
func (w *treeWatch) unfollow()               {}
func (w *treeWatch) take() watchTake         { return watchTake{Lost: "no watch"} }
func (w *treeWatch) watchFile(string) bool   { return false }
func (w *treeWatch) unwatchFile(string)      {}
func (w *treeWatch) watchesFile(string) bool { return false }

// maxDirty is the Linux watch's bound (see watch.go); unused here.
var maxDirty = 200000
