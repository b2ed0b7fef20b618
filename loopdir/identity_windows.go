package loopdir

import "os"

// folderIdentity: loops do not run on Windows.
func folderIdentity(os.FileInfo) (string, bool) { return "", false }
