package redact

import (
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
