package guard

import "os"

// fileIDs: Windows gives no inode or ctime through os.FileInfo.
func fileIDs(os.FileInfo) (ino, nlink uint64, ctimeNS int64, ok bool) { return 0, 0, 0, false }

// syncFS does nothing on Windows, where no loop runs.
func syncFS(string) error { return nil }
