//go:build !linux

package judge

import "os"

// changeTime: where the change time is not read, the size, modification
// time and mode alone identify a file's content.
func changeTime(os.FileInfo) (int64, uint64) { return 0, 0 }
