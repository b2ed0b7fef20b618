package spec

import (
	"strings"
	"testing"
)

func TestSandboxAllowSockets(t *testing.T) {
	l, err := Parse([]byte("objective: x\nverify: [true]\nsandbox: {mode: bwrap, allow_read: [/srv/data], allow_sockets: [/run/postgresql/.s.PGSQL.5432]}\n"), "/l/loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if l.Sandbox != "bwrap" || len(l.SandboxOpts.AllowSockets) != 1 || l.SandboxOpts.AllowRead[0] != "/srv/data" {
		t.Fatalf("sandbox: %q %+v", l.Sandbox, l.SandboxOpts)
	}
	w := l.SocketWarnings()
	if len(w) != 1 || !strings.Contains(w[0], "/run/postgresql/.s.PGSQL.5432") || !strings.Contains(w[0], "outside the sandbox") {
		t.Fatalf("warnings %q", w)
	}
	l, err = Parse([]byte("objective: x\nverify: [true]\nsandbox: auto\n"), "/l/loop.yaml")
	if err != nil || len(l.SocketWarnings()) != 0 {
		t.Fatalf("no sockets: %v %q", err, l.SocketWarnings())
	}
	for _, c := range []struct{ yaml, want string }{
		{"sandbox: {mode: bwrap, allow_sockets: [run/x.sock]}\n", `loop.yaml:3:40: sandbox.allow_sockets[0]: "run/x.sock" is not an absolute path`},
		{"sandbox:\n  mode: bwrap\n  allow_read: [/ok, data]\n", `loop.yaml:5:21: sandbox.allow_read[1]: "data" is not an absolute path`},
		{"sandbox: {mode: bwrap, allow_socket: [/x]}\n", `loop.yaml:3:24: unknown field "allow_socket"`},
	} {
		_, err := Parse([]byte("objective: x\nverify: [true]\n"+c.yaml), "/l/loop.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
	}
}
