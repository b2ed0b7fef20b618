package cli

import (
	"bytes"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// webhook NAME ok|redirect TARGET FILE: serve a webhook receiver on
// 127.0.0.1 for the rest of the script. ok records every request (method,
// path, body) in $WORK/NAME.received; redirect answers 307 to TARGET's URL.
// Every {{NAME}} in FILE becomes the receiver's URL.
func cmdWebhook(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: webhook name ok|redirect [target] file")
	}
	name, mode, file := args[0], args[1], args[len(args)-1]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	url := "http://" + ln.Addr().String()
	received := filepath.Join(ts.Getenv("WORK"), name+".received")
	ts.Check(os.WriteFile(received, nil, 0o644))
	ts.Check(os.WriteFile(filepath.Join(ts.Getenv("WORK"), name+".url"), []byte(url), 0o644))
	var mu sync.Mutex
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		f, _ := os.OpenFile(received, os.O_APPEND|os.O_WRONLY, 0o644)
		f.WriteString(r.Method + " " + r.URL.String() + "\n" + string(body) + "\n")
		f.Close()
		mu.Unlock()
		if mode == "redirect" {
			to, _ := os.ReadFile(filepath.Join(ts.Getenv("WORK"), args[2]+".url"))
			http.Redirect(w, r, string(to)+"/stolen", http.StatusTemporaryRedirect)
		}
	})
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
	data, err := os.ReadFile(ts.MkAbs(file))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(file), bytes.ReplaceAll(data, []byte("{{"+name+"}}"), []byte(url)), 0o644))
}

// nosecrets VAR... -- PATH...: no file under PATH (a folder is walked;
// stdout and stderr are the last command's) holds the value of any VAR of
// the script's environment, nor any of the literal words after "=", as in
// "=b3BlbnNz" (for a value that is no variable's). The engine's blob store
// (copies of the user's protected files, the loop file among them) is
// skipped.
func cmdNoSecrets(ts *testscript.TestScript, neg bool, args []string) {
	i := 0
	for i < len(args) && args[i] != "--" {
		i++
	}
	if neg || i == 0 || i == len(args) {
		ts.Fatalf("usage: nosecrets VAR... -- PATH...")
	}
	var secrets []string
	for _, v := range args[:i] {
		if strings.HasPrefix(v, "=") {
			secrets = append(secrets, v[1:])
			continue
		}
		val := ts.Getenv(v)
		if len(val) < 8 {
			ts.Fatalf("nosecrets: $%s is not set (or too short to be a secret)", v)
		}
		secrets = append(secrets, val)
	}
	check := func(where string, data []byte) {
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				ts.Fatalf("%s holds the secret %.12s…", where, s)
			}
		}
	}
	files := 0
	for _, p := range args[i+1:] {
		if p == "stdout" || p == "stderr" {
			check(p, []byte(ts.ReadFile(p)))
			continue
		}
		err := filepath.WalkDir(ts.MkAbs(p), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "blobs" && filepath.Base(filepath.Dir(filepath.Dir(path))) == "engine" {
				// The engine's snapshot of the protected files: copies of
				// the user's own files (the loop file), kept as they are
				// to be put back.
				return filepath.SkipDir
			}
			if !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(path)
			if err == nil {
				files++
				check(path, data)
			}
			return nil
		})
		ts.Check(err)
	}
	ts.Logf("nosecrets: %d files, %d secrets: none found", files, len(secrets))
}
