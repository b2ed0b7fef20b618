package redact

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

func TestScan(t *testing.T) {
	r := New([]string{"MY_SERVICE_TOKEN=s3cr3t-value-from-env", "PATH=/usr/bin"}, nil, nil)
	content := strings.Join([]string{
		"package x", // 1
		"const token = \"s3cr3t-value-from-env\"",                 // 2
		"-----BEGIN OPENSSH PRIVATE KEY-----",                     // 3
		"b3BlbnNzaC1rZXktdjEAAAAA",                                // 4
		"-----END OPENSSH PRIVATE KEY-----",                       // 5
		"aws = AKIAIOSFODNN7EXAMPLE",                              // 6
		"gh = ghp_" + strings.Repeat("a", 36),                     // 7
		"pat = github_pat_" + strings.Repeat("B", 30),             // 8
		"slack = xoxb-1234567890-abcdefghijklmn",                  // 9
		"anthropic = sk-ant-api03-" + strings.Repeat("x", 40),     // 10
		"openai = sk-proj-" + strings.Repeat("Y", 40),             // 11
		"google = AIza" + strings.Repeat("c", 35),                 // 12
		"fine = sk-short and AKIA lowercase akiaiosfodnn7example", // 13
	}, "\n")
	got := Scan(r, []byte(content))
	want := []Finding{
		{"MY_SERVICE_TOKEN", 2}, {"private_key", 3}, {"aws_access_key", 6}, {"github_token", 7}, {"github_token", 8},
		{"slack_token", 9}, {"anthropic_key", 10}, {"openai_key", 11}, {"google_api_key", 12},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	for _, f := range got {
		if strings.Contains(f.Kind, "s3cr3t") {
			t.Errorf("a finding carries the value: %v", f)
		}
	}
	if got := Scan(nil, []byte("nothing secret here\nsk-ant is a prefix\n")); len(got) != 0 {
		t.Errorf("clean: %v", got)
	}
}

// A secret in any spelling: base64 (standard and URL alphabets, glued to
// a word), hex, and in a file's name.
func TestScanEncoded(t *testing.T) {
	r := New([]string{"MY_SERVICE_TOKEN=s3cr3t-value-from-env"}, nil, nil)
	b64 := base64.StdEncoding.EncodeToString([]byte("token: s3cr3t-value-from-env"))
	url := base64.URLEncoding.EncodeToString([]byte("AKIAIOSFODNN7EXAMPLE and more bytes?>?"))
	hx := hex.EncodeToString([]byte("ghp_" + strings.Repeat("a", 36)))
	content := "package x\nvar a = \"" + b64 + "\"\nvar b = x" + url + "\nvar c = \"" + hx + "\"\nvar d = \"aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ=\"\nvar e = \"" + strings.Repeat("0f", 40) + "\"\n"
	got := Scan(r, []byte(content))
	want := []Finding{{"MY_SERVICE_TOKEN", 2}, {"aws_access_key", 3}, {"github_token", 4}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	if got := ScanName(r, "notes/"+b64+".txt"); fmt.Sprint(got) != fmt.Sprint([]Finding{{"MY_SERVICE_TOKEN", 1}}) {
		t.Errorf("name: %v", got)
	}
	if got := ScanName(r, "src/calc.go"); len(got) != 0 {
		t.Errorf("clean name: %v", got)
	}
}
