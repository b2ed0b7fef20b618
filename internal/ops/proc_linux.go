package ops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Alive says whether pid is a live process (not a zombie).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err)
	}
	return statField(string(b), 0) != "Z"
}

// statField returns field n (0 = state) after the command name of a
// /proc/PID/stat line: state ppid pgrp session …
func statField(s string, n int) string {
	i := strings.LastIndex(s, ")")
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if n < len(f) {
		return f[n]
	}
	return ""
}

// lockHeldBy says whether one of pid's open files holds an exclusive flock
// on file, from /proc/PID/fd and /proc/PID/fdinfo (each open file lists the
// locks it holds). Unlike /proc/locks, the answer does not depend on what
// other processes lock or release meanwhile. known is false when pid's
// files cannot be read.
func lockHeldBy(pid int, file string) (held, known bool) {
	var want syscall.Stat_t
	if err := syscall.Stat(file, &want); err != nil {
		return false, false
	}
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return false, false
	}
	for _, fd := range fds {
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join(fdDir, fd.Name()), &st) != nil || st.Dev != want.Dev || st.Ino != want.Ino {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			// lock:	1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF
			f := strings.Fields(line)
			if len(f) >= 5 && f[0] == "lock:" && f[2] == "FLOCK" && f[4] == "WRITE" {
				return true, true
			}
		}
	}
	return false, true
}

// lockHolders returns the pids that hold a lock on file per /proc/locks; ok
// is false when /proc/locks cannot be read.
func lockHolders(file string) (map[int]bool, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(file, &st); err != nil {
		return nil, false
	}
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return nil, false
	}
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	out := map[int]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		// 1: FLOCK  ADVISORY  WRITE 1234 00:2e:5678 0 EOF
		// (a blocked waiter has "->" after the number)
		if len(f) > 1 && f[1] == "->" {
			continue
		}
		if len(f) < 6 || f[5] != want {
			continue
		}
		if p, err := strconv.Atoi(f[4]); err == nil {
			out[p] = true
		}
	}
	return out, true
}

// readProcs reads the parent, group and session of every live process.
func readProcs() map[int]procInfo {
	out := map[int]procInfo{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		if statField(s, 0) == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(statField(s, 1))
		pgrp, _ := strconv.Atoi(statField(s, 2))
		sid, _ := strconv.Atoi(statField(s, 3))
		out[pid] = procInfo{ppid: ppid, pgrp: pgrp, sid: sid}
	}
	return out
}
