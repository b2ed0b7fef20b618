//go:build !linux

package sandbox

import "errors"

// restrictThread fails: Landlock is Linux's.
func restrictThread(helperSpec) error { return errors.New("landlock is a Linux sandbox") }
