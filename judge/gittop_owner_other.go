//go:build !unix

package judge

import "os"

// fileOwner is not known here.
func fileOwner(os.FileInfo) int { return -1 }
