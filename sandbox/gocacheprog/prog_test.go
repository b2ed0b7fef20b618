//go:build linux

package gocacheprog

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func id(b byte) []byte { return bytes.Repeat([]byte{b}, hashSize) }

// talk runs a Server over the requests (a body after a put when body is
// not nil) and returns its responses after the capabilities.
func talk(t *testing.T, s *Server, reqs []request, bodies [][]byte) []response {
	t.Helper()
	var in bytes.Buffer
	for i, r := range reqs {
		data, _ := json.Marshal(r)
		in.Write(append(data, '\n', '\n'))
		if i < len(bodies) && bodies[i] != nil {
			in.WriteString(`"` + base64.StdEncoding.EncodeToString(bodies[i]) + "\"\n")
		}
	}
	var out bytes.Buffer
	if err := s.Serve(&in, &out); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&out)
	var caps response
	if err := dec.Decode(&caps); err != nil || strings.Join(caps.KnownCommands, ",") != "get,put,close" {
		t.Fatalf("capabilities: %+v %v", caps, err)
	}
	var res []response
	for {
		var r response
		if err := dec.Decode(&r); err == io.EOF {
			return res
		} else if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
}

func dirs2(t *testing.T) (own, user string) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	own, user = filepath.Join(root, "own"), filepath.Join(root, "user")
	os.Mkdir(own, 0o755)
	os.Mkdir(user, 0o755)
	return own, user
}

// goEntry writes an entry in Go's own layout.
func goEntry(t *testing.T, dir string, action, out []byte, body string) string {
	t.Helper()
	a, o := hex.EncodeToString(action), hex.EncodeToString(out)
	os.MkdirAll(filepath.Join(dir, a[:2]), 0o755)
	os.MkdirAll(filepath.Join(dir, o[:2]), 0o755)
	line := fmt.Sprintf("v1 %s %s %20d %20d\n", a, o, len(body), 12345)
	if err := os.WriteFile(filepath.Join(dir, a[:2], a+"-a"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(dir, o[:2], o+"-d")
	if err := os.WriteFile(d, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestProgGetPutUnion(t *testing.T) {
	own, user := dirs2(t)
	userFile := goEntry(t, user, id(3), id(4), "from the user")
	s := &Server{Own: own, User: user}
	res := talk(t, s, []request{
		{ID: 1, Command: "get", ActionID: id(1)},
		{ID: 2, Command: "put", ActionID: id(1), OutputID: id(2), BodySize: 5},
		{ID: 3, Command: "get", ActionID: id(1)},
		{ID: 4, Command: "get", ActionID: id(3)},
		{ID: 5, Command: "close"},
	}, [][]byte{nil, []byte("hello")})
	if len(res) != 5 || !res[0].Miss {
		t.Fatalf("a first get should miss: %+v", res)
	}
	if res[1].Err != "" || res[1].DiskPath == "" || !strings.HasPrefix(res[1].DiskPath, own+"/") {
		t.Fatalf("put: %+v", res[1])
	}
	if b, _ := os.ReadFile(res[1].DiskPath); string(b) != "hello" {
		t.Fatalf("put wrote %q", b)
	}
	if r := res[2]; r.Miss || !bytes.Equal(r.OutputID, id(2)) || r.Size != 5 || r.DiskPath != res[1].DiskPath {
		t.Fatalf("get after put should hit: %+v", r)
	}
	r := res[3]
	if r.Miss || !bytes.Equal(r.OutputID, id(4)) || r.Size != int64(len("from the user")) {
		t.Fatalf("get should be served from the user's cache: %+v", r)
	}
	if b, _ := os.ReadFile(r.DiskPath); string(b) != "from the user" || !strings.HasPrefix(r.DiskPath, own+"/") {
		t.Fatalf("the user's output should be reached from the own cache, at %s: %q", r.DiskPath, b)
	}
	if got, _ := os.ReadFile(userFile); string(got) != "from the user" {
		t.Fatal("the user's cache changed")
	}
	ents, _ := os.ReadDir(user)
	if len(ents) != 2 { // 03 and 04 only
		t.Fatalf("the program wrote the user's cache: %v", ents)
	}
}

func TestProgRefusesLinksWrongSizesAndBigBodies(t *testing.T) {
	own, user := dirs2(t)
	outside := filepath.Join(filepath.Dir(user), "secret")
	os.WriteFile(outside, []byte("0123456789"), 0o644)
	// An output file that is a symbolic link, out of the user's cache.
	d := goEntry(t, user, id(5), id(6), "0123456789")
	os.Remove(d)
	os.Symlink(outside, d)
	// An entry file that is one.
	goEntry(t, filepath.Dir(user), id(7), id(8), "x") // lays root/07/…-a beside user
	a := hex.EncodeToString(id(7))
	os.MkdirAll(filepath.Join(user, a[:2]), 0o755)
	os.Symlink(filepath.Join(filepath.Dir(user), a[:2], a+"-a"), filepath.Join(user, a[:2], a+"-a"))
	// A folder of the cache that is one.
	goEntry(t, outside+"-dir", id(9), id(9), "y")
	os.Symlink(filepath.Join(outside+"-dir", "09"), filepath.Join(user, "09"))
	// An output file of another size than its entry's.
	d = goEntry(t, user, id(10), id(11), "short")
	os.WriteFile(d, []byte("longer than said"), 0o644)
	s := &Server{Own: own, User: user, MaxBody: 8}
	res := talk(t, s, []request{
		{ID: 1, Command: "get", ActionID: id(5)},
		{ID: 2, Command: "get", ActionID: id(7)},
		{ID: 3, Command: "get", ActionID: id(9)},
		{ID: 4, Command: "get", ActionID: id(10)},
		{ID: 5, Command: "put", ActionID: id(12), OutputID: id(13), BodySize: 9},
		{ID: 6, Command: "get", ActionID: id(12)},
		{ID: 7, Command: "put", ActionID: id(14), OutputID: id(15), BodySize: 1 << 40},
		{ID: 8, Command: "close"},
	}, [][]byte{nil, nil, nil, nil, []byte("123456789"), nil, []byte("z")})
	if len(res) != 8 {
		t.Fatalf("responses: %+v", res)
	}
	for i := 0; i < 4; i++ {
		if !res[i].Miss {
			t.Errorf("get %d should miss (a symbolic link or a wrong size): %+v", res[i].ID, res[i])
		}
	}
	if res[4].Err == "" || res[4].DiskPath != "" || !res[5].Miss || res[6].Err == "" {
		t.Errorf("a body over the bound should be refused: %+v %+v %+v", res[4], res[5], res[6])
	}
}

// A real go build: the second, with the program over an empty own cache
// and the first build's cache as the user's, compiles nothing.
func TestProgServesGoBuildFromUserCache(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("no go command")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	own, user := dirs2(t)
	mod := filepath.Join(filepath.Dir(own), "mod")
	os.Mkdir(mod, 0o755)
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/p\n\ngo 1.24\n"), 0o644)
	os.WriteFile(filepath.Join(mod, "p.go"), []byte("package p\n\nfunc F() int { return 42 }\n"), 0o644)
	build := func(env ...string) string {
		cmd := exec.Command(goBin, "build", "-x", "./...")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), append([]string{"GOFLAGS=", "GOTOOLCHAIN=local", "GOENV=off"}, env...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := build("GOCACHE="+user, "GOCACHEPROG="); !strings.Contains(out, "/compile") {
		t.Fatalf("the first build should compile the package:\n%s", out)
	}
	prog, penv, ok := Command(exe, own, user)
	if !ok {
		t.Fatal("no command for", exe)
	}
	if out := build("GOCACHE="+own, "GOCACHEPROG="+prog, penv); strings.Contains(out, "/compile") {
		t.Fatalf("the second build should be served from the user's cache:\n%s", out)
	}
	// A new package goes to the own cache, none to the user's.
	before := countFiles(user)
	os.WriteFile(filepath.Join(mod, "q.go"), []byte("package p\n\nfunc G() int { return 7 }\n"), 0o644)
	if out := build("GOCACHE="+own, "GOCACHEPROG="+prog, penv); !strings.Contains(out, "/compile") {
		t.Fatalf("a changed package should be compiled:\n%s", out)
	}
	if countFiles(user) != before || countFiles(own) == 0 {
		t.Fatalf("the build should write its own cache only: user %d -> %d files, own %d", before, countFiles(user), countFiles(own))
	}
}

func countFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}
