// Command fakeapi serves a scripted fake model API on 127.0.0.1 for tests and
// demos of looprinter against the real agent CLIs.
//
//	fakeapi -script replies.yaml [-addr 127.0.0.1:0] [-log requests.jsonl] [-url-file url.txt]
//
// It prints its base URL (http://127.0.0.1:PORT) on the first line of
// standard output, answers Anthropic /v1/messages, OpenAI /v1/responses and
// Gemini :streamGenerateContent requests with the script's replies in order,
// appends each request it gets to the -log file as one JSON line, and runs
// until it gets SIGINT or SIGTERM.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/looprinter/looprinter/internal/fakeapi"
)

func main() {
	scriptPath := flag.String("script", "", "script file (JSON or YAML): {replies: [...], exhausted: {...}}")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback only)")
	logPath := flag.String("log", "", "append every request to this file, one JSON object a line")
	urlFile := flag.String("url-file", "", "also write the base URL to this file")
	flag.Parse()

	var script fakeapi.Script
	if *scriptPath != "" {
		var err error
		if script, err = fakeapi.LoadScript(*scriptPath); err != nil {
			fmt.Fprintln(os.Stderr, "fakeapi:", err)
			os.Exit(2)
		}
	}
	srv, err := fakeapi.Listen(*addr, script)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeapi:", err)
		os.Exit(1)
	}
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakeapi:", err)
			os.Exit(1)
		}
		defer f.Close()
		var mu sync.Mutex
		srv.OnRequest(func(r fakeapi.Request) {
			r.Header = nil
			b, _ := json.Marshal(r)
			mu.Lock()
			f.Write(append(b, '\n'))
			mu.Unlock()
		})
	}
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(srv.URL+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fakeapi:", err)
			os.Exit(1)
		}
	}
	fmt.Println(srv.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	srv.Close()
	if n := srv.Remaining(); n > 0 {
		fmt.Fprintf(os.Stderr, "fakeapi: %d scripted replies unused\n", n)
	}
}
