package proc

import (
	"os"
	"strconv"
	"strings"
)

// Table reads every process from /proc/PID/stat. A process that ends while
// the table is read is left out.
func Table() ([]Entry, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if e, ok := readStat(pid); ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// Lookup reads one process; ok is false when there is none, known false
// when /proc cannot be read at all.
func Lookup(pid int) (e Entry, ok, known bool) {
	if e, ok := readStat(pid); ok {
		return e, true, true
	}
	_, err := os.Stat("/proc/self/stat")
	return Entry{}, false, err == nil
}

// readStat parses /proc/PID/stat: after the command name (which may hold
// spaces and parentheses, hence the last ')'), state ppid pgrp session …,
// and starttime, the 22nd field, in clock ticks since boot.
func readStat(pid int) (Entry, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Entry{}, false
	}
	return parseStat(pid, string(b))
}

func parseStat(pid int, s string) (Entry, bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Entry{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return Entry{}, false
	}
	e := Entry{PID: pid, Zombie: f[0] == "Z" || f[0] == "X"}
	e.PPID, _ = strconv.Atoi(f[1])
	e.PGID, _ = strconv.Atoi(f[2])
	e.SID, _ = strconv.Atoi(f[3])
	e.Start, _ = strconv.ParseInt(f[19], 10, 64)
	return e, true
}

// Environ reads a process's environment (NUL-separated); only the
// processes of this user are readable (and not those made undumpable).
func Environ(pid int) ([]byte, error) {
	return os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
}

// Args reads a process's arguments, argv[0] first.
func Args(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), nil
}

// OwnerEnv is nil on Linux: the engine is a child subreaper, so what a run
// leaves behind stays its descendant and needs no mark.
func OwnerEnv() []string { return nil }
