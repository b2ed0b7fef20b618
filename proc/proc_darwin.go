package proc

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// szomb is a zombie's p_stat (SZOMB in <sys/proc.h>).
const szomb = 5

// Table reads every process from the kernel's table, sysctl
// kern.proc.all: parent, group and start time from the kinfo_proc (its
// session is a kernel pointer, so the session id comes from getsid; -1 when
// that fails, which matches no rule of Members).
func Table() ([]Entry, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(kps))
	for i := range kps {
		out = append(out, entryOf(&kps[i]))
	}
	return out, nil
}

func entryOf(kp *unix.KinfoProc) Entry {
	e := Entry{
		PID:    int(kp.Proc.P_pid),
		PPID:   int(kp.Eproc.Ppid),
		PGID:   int(kp.Eproc.Pgid),
		SID:    -1,
		Start:  int64(kp.Proc.P_starttime.Sec)*1e6 + int64(kp.Proc.P_starttime.Usec),
		Zombie: kp.Proc.P_stat == szomb,
	}
	if sid, err := unix.Getsid(e.PID); err == nil {
		e.SID = sid
	}
	return e
}

// Lookup reads one process (sysctl kern.proc.pid); ok is false when there
// is none, known false when the table cannot be read.
func Lookup(pid int) (e Entry, ok, known bool) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.pid", pid)
	if err != nil {
		return Entry{}, false, false
	}
	if len(kps) == 0 || int(kps[0].Proc.P_pid) != pid {
		return Entry{}, false, true
	}
	return entryOf(&kps[0]), true, true
}

// Environ reads a process's environment (NUL-separated) from sysctl
// kern.procargs2; only the processes of this user are readable.
func Environ(pid int) ([]byte, error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, err
	}
	_, env, err := parseProcArgs(b)
	return env, err
}

// Args reads a process's arguments, argv[0] first (kern.procargs2).
func Args(pid int) ([]string, error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, err
	}
	args, _, err := parseProcArgs(b)
	return args, err
}

var self struct {
	sync.Once
	mark string
}

// OwnerEnv is the owner mark of this engine, to put in the environment of
// every agent it starts (see Members, rule 3): macOS has no child
// subreaper, so a setsid daemon an agent leaves is re-parented to launchd
// and found again only by its mark.
func OwnerEnv() []string {
	self.Do(func() {
		var start int64
		if e, ok, _ := Lookup(os.Getpid()); ok {
			start = e.Start
		}
		self.mark = OwnerVar + "=" + OwnerMark(os.Getpid(), start)
	})
	return []string{self.mark}
}
