package sandbox

import "os"

// freshPrivateDir makes dir an empty folder for one run (no run is
// confined on Windows).
func freshPrivateDir(dir string) error {
	os.RemoveAll(dir)
	return os.MkdirAll(dir, 0o700)
}
