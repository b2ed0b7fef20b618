package spec

import (
	"reflect"
	"strings"
	"testing"
)

func TestNetworkForms(t *testing.T) {
	for _, c := range []struct {
		yaml, mode string
		allow      []string
	}{
		{"", NetworkAllow, nil},
		{"network: open\n", NetworkOpen, nil},
		{"network: OFF\n", NetworkOff, nil},
		{"network: {allow: [proxy.golang.org, '*.npmjs.org:443', '127.0.0.1:8080']}\n", NetworkAllow, []string{"proxy.golang.org", "*.npmjs.org:443", "127.0.0.1:8080"}},
		{"network:\n  mode: off\n", NetworkOff, nil},
	} {
		l, err := Parse([]byte("objective: x\nverify: [true]\n"+c.yaml), "/l/loop.yaml")
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if l.Network.Mode != c.mode || !reflect.DeepEqual(l.Network.Allow, c.allow) {
			t.Errorf("%q: %+v", c.yaml, l.Network)
		}
	}
	l, err := Parse([]byte("objective: x\nverify: [true]\nsandbox: {mode: bwrap, deny_read: [~/.secrets, /srv/keys], allow_read: [~/.ssh]}\n"), "/l/loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if l.Sandbox != "bwrap" || len(l.SandboxOpts.DenyRead) != 2 || l.SandboxOpts.AllowRead[0] != "~/.ssh" {
		t.Errorf("sandbox: %q %+v", l.Sandbox, l.SandboxOpts)
	}
	l, err = Parse([]byte("objective: x\nverify: [true]\nsandbox: landlock\n"), "/l/loop.yaml")
	if err != nil || l.Sandbox != "landlock" {
		t.Errorf("sandbox scalar: %v %q", err, l.Sandbox)
	}
}

func TestNetworkBadInput(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"network: maybe\n", `loop.yaml:3:10: network: "maybe" is not known`},
		{"network:\n  allow:\n    - ok.example\n    - https://x.example/path\n", `loop.yaml:6:7: network.allow[1]: "https://x.example/path" is not a host`},
		{"network: {allow: ['*']}\n", `loop.yaml:3:19: network.allow[0]`},
		{"network: {allow: ['x.com:99999']}\n", "port must be a number"},
		{"network: {allw: [x]}\n", `loop.yaml:3:11: unknown field "allw"`},
		{"sandbox: {mode: bwrap, deny_read: [relative/path]}\n", `loop.yaml:3:36: sandbox.deny_read[0]: "relative/path" is not an absolute path`},
		{"sandbox: {mode: nope}\n", `sandbox: "nope" is not known`},
	} {
		_, err := Parse([]byte("objective: x\nverify: [true]\n"+c.yaml), "/l/loop.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
	}
}
