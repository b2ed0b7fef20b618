//go:build !linux

package sandbox

// FinishCacheWarm does nothing where checks cannot be confined (Linux
// only): no box fills a cache layer there.
func FinishCacheWarm(c CheckCache, env []string, tree string) error { return nil }
