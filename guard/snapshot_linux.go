package guard

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func statEntry(rel string, fi os.FileInfo) snapEntry {
	e := snapEntry{Path: rel, Mode: uint32(fi.Mode().Perm()), Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.Ino, e.Nlink = st.Ino, uint64(st.Nlink)
		e.CtimeNS = st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return e
}

// syncFS writes everything of the file system that holds dir to disk.
func syncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}
