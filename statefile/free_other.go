//go:build !linux && !darwin

package statefile

// Free cannot tell a folder's free space here: ok is always false.
func Free(string) (uint64, bool) { return 0, false }
