//go:build !linux

package sandbox

import "os"

// FinishCacheWarm does nothing where checks cannot be confined (Linux
// only): no box fills a cache layer there.
func FinishCacheWarm(c CheckCache, env []string, tree string) error { return nil }

// RemoveCache removes a cache layer's folder.
func RemoveCache(dir string) error { return os.RemoveAll(dir) }
