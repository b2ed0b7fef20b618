//go:build !linux

package sandbox

// Undumpable does nothing where there is no /proc to read another
// process's environment from.
func Undumpable() error { return nil }
