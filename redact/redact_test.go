package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// Fake credentials of every shape; none is real.
const (
	fakeAnthropic = "sk-ant-api03-FAKEfakeFAKEfake0123456789abcdefABCDEF_-xyz"
	fakeGitHub    = "ghp_FAKEfake0123456789abcdefABCDEFghijkl"
	fakeAWS       = "AKIAFAKE0123456789AB"
	fakeService   = `s3rv1ce"tok\en-value`
	fakeKey       = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBGRkFLRUZBS0VGQUtFRkFLRUZBS0VGQUtFRkFLRUZBSwAAAJgAAAAA\n-----END OPENSSH PRIVATE KEY-----"
)

func testRedactor() *Redactor {
	return New([]string{
		"MY_SERVICE_TOKEN=" + fakeService,
		"ANTHROPIC_API_KEY=" + fakeAnthropic,
		"HOME=/home/someone",
		"SHORT_TOKEN=abc",              // too short to redact by value
		"GIT_AUTHOR_NAME=Someone Else", // AUTHOR is not AUTH
		"PLAIN=" + "not-a-secret-at-all",
		"DEPLOY_PASSWD=hunter2hunter2",
		"CUSTOM_THING=customvalue123",
	}, []string{"custom_thing"}, []*regexp.Regexp{regexp.MustCompile(`internal-id-([0-9]{6})`)})
}

func TestStringRedactsValuesAndShapes(t *testing.T) {
	r := testRedactor()
	in := strings.Join([]string{
		"MY_SERVICE_TOKEN=" + fakeService,
		"key " + fakeAnthropic + " end",
		"gh " + fakeGitHub,
		"aws " + fakeAWS,
		fakeKey,
		"url https://bob:pa55word@example.com/x",
		"deploy hunter2hunter2 custom customvalue123",
		"id internal-id-123456",
		"openai sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX",
		"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"Authorization: Bearer abcdefghijklmnop0123",
		"slack xoxb-123456789012-abcdefghij",
		"https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXX",
		"google AIzaSyFAKEfakeFAKEfake0123456789abcdefg",
		"short abc stays, name Someone Else stays, task-abcdefghijklmnopqrstuvwxyz stays",
	}, "\n")
	out := r.String(in)
	for _, secret := range []string{fakeService, fakeAnthropic, fakeGitHub, fakeAWS, "b3BlbnNzaC1rZXktdjEAAAAABG5v", "pa55word",
		"hunter2hunter2", "customvalue123", "123456", "sk-proj-", "dozjgNryP4J3", "abcdefghijklmnop0123", "xoxb-", "XXXXXXXXXXXX", "AIzaSy"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q survived:\n%s", secret, out)
		}
	}
	for _, want := range []string{"[REDACTED:MY_SERVICE_TOKEN]", "[REDACTED:ANTHROPIC_API_KEY]", "[REDACTED:github_token]", "[REDACTED:aws_access_key]",
		"[REDACTED:private_key]", "https://[REDACTED:url_credentials]@example.com/x", "[REDACTED:DEPLOY_PASSWD]", "[REDACTED:CUSTOM_THING]",
		"internal-id-[REDACTED:pattern]", "[REDACTED:openai_key]", "[REDACTED:jwt]", "Bearer [REDACTED:bearer_token]", "[REDACTED:slack_token]",
		"hooks.slack.com/services/[REDACTED:slack_webhook]", "[REDACTED:google_api_key]",
		"short abc stays, name Someone Else stays, task-abcdefghijklmnopqrstuvwxyz stays"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	// A shape with no variable behind it is named by its shape.
	if got := New(nil, nil, nil).String("x " + fakeAnthropic); got != "x [REDACTED:anthropic_key]" {
		t.Errorf("got %q", got)
	}
}

func TestNilRedactorPassesThrough(t *testing.T) {
	var r *Redactor
	if r.String(fakeAnthropic) != fakeAnthropic || string(r.Bytes([]byte(fakeAWS))) != fakeAWS {
		t.Fatal("a nil redactor changed its input")
	}
	var b bytes.Buffer
	w := r.Writer(&b)
	io.WriteString(w, fakeAnthropic)
	w.Close()
	if b.String() != fakeAnthropic {
		t.Fatal("a nil redactor's stream changed its input")
	}
}

func TestJSONEscapedValueIsCaught(t *testing.T) {
	r := testRedactor()
	line, _ := json.Marshal(map[string]string{"text": "env: MY_SERVICE_TOKEN=" + fakeService + " <done>"})
	out := string(r.Bytes(line))
	if strings.Contains(out, "s3rv1ce") {
		t.Fatalf("the JSON-escaped value survived: %s", out)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(out), &back); err != nil {
		t.Fatalf("redaction broke the JSON: %v: %s", err, out)
	}
}

func TestUnfinishedPrivateKeyIsRedactedToTheEnd(t *testing.T) {
	r := New(nil, nil, nil)
	out := r.String("before\n" + fakeKey[:90])
	if out != "before\n[REDACTED:private_key]" {
		t.Fatalf("got %q", out)
	}
}

func TestValueRedactsBeforeMarshalling(t *testing.T) {
	type inner struct{ Lines []string }
	type ev struct {
		Msg   string
		Ptr   *inner
		M     map[string]string
		Raw   json.RawMessage
		N     int
		plain string
	}
	r := testRedactor()
	orig := ev{Msg: "x " + fakeService, Ptr: &inner{Lines: []string{"ok", fakeGitHub}}, M: map[string]string{"k": fakeAWS},
		Raw: json.RawMessage(`{"a":"` + fakeAnthropic + `"}`), N: 3, plain: fakeAWS}
	got := Value(r, orig)
	b, _ := json.Marshal(got)
	for _, s := range []string{"s3rv1ce", fakeGitHub, fakeAWS, fakeAnthropic} {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("%q survived: %s", s, b)
		}
	}
	if got.N != 3 || got.plain != fakeAWS {
		t.Errorf("other fields changed: %+v", got)
	}
	if orig.Msg != "x "+fakeService || orig.Ptr.Lines[1] != fakeGitHub || orig.M["k"] != fakeAWS {
		t.Error("the original was changed")
	}
}

// streamThrough writes in through a redacting stream in pieces of size n.
func streamThrough(r *Redactor, in string, n int, flushEvery bool) string {
	var b bytes.Buffer
	w := r.Writer(&b)
	for len(in) > 0 {
		k := min(n, len(in))
		w.Write([]byte(in[:k]))
		in = in[k:]
		if flushEvery {
			w.Flush()
		}
	}
	w.Close()
	return b.String()
}

func TestStreamCatchesASecretSplitAcrossWrites(t *testing.T) {
	r := testRedactor()
	pad := strings.Repeat("x", 4096-10)
	in := pad + "MY_SERVICE_TOKEN=" + fakeService + " and " + fakeAnthropic + "\n" + fakeKey + "\n" + strings.Repeat("y", 70000) + fakeGitHub + "\nend\n"
	for _, n := range []int{1, 7, 4096, 65536, 1 << 20} {
		for _, flush := range []bool{false, true} {
			if flush && n == 1 {
				continue // a flush per byte of a 70 KB line is slow; 7 covers it
			}
			out := streamThrough(r, in, n, flush)
			for _, s := range []string{"s3rv1ce", fakeAnthropic, fakeGitHub, "b3BlbnNzaC1rZXktdjEAAAAABG5v"} {
				if strings.Contains(out, s) {
					t.Fatalf("chunk %d flush %v: %q survived", n, flush, s)
				}
			}
			if want := r.String(in); out != want {
				t.Fatalf("chunk %d flush %v: the stream differs from String (%d vs %d bytes)", n, flush, len(out), len(want))
			}
		}
	}
}

func TestStreamHoldsALongPrivateKeyToItsEnd(t *testing.T) {
	r := New(nil, nil, nil)
	body := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\n", 20000) // 740 KB: more than a stream holds
	in := "head\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----\ntail\n"
	out := streamThrough(r, in, 4096, false)
	if strings.Contains(out, "QUJDREVG") || !strings.HasPrefix(out, "head\n[REDACTED:private_key]") || !strings.HasSuffix(out, "\ntail\n") {
		t.Fatalf("got %q…%q", out[:min(len(out), 100)], out[max(0, len(out)-100):])
	}
}

func TestSecretNames(t *testing.T) {
	for name, want := range map[string]bool{
		"ANTHROPIC_API_KEY": true, "GITHUB_TOKEN": true, "db_password": true, "AWS_SECRET_ACCESS_KEY": true,
		"GOOGLE_APPLICATION_CREDENTIALS": true, "HTTP_AUTH": true, "HOME": false, "GIT_AUTHOR_NAME": false, "PATH": false,
	} {
		if SecretName(name) != want {
			t.Errorf("SecretName(%s) = %v", name, !want)
		}
	}
}

func TestExistingPathIsNotAValue(t *testing.T) {
	dir := t.TempDir()
	r := New([]string{"SSH_AUTH_SOCK=" + dir}, nil, nil)
	if got := r.String("in " + dir); got != "in "+dir {
		t.Fatalf("a path was redacted: %q", got)
	}
}

func FuzzStreamEqualsString(f *testing.F) {
	f.Add([]byte("MY_SERVICE_TOKEN="+fakeService+" "+fakeAnthropic), 3)
	f.Add([]byte(fakeKey), 5)
	r := testRedactor()
	f.Fuzz(func(t *testing.T, in []byte, n int) {
		if n <= 0 || n > 1<<16 {
			n = 1
		}
		out := streamThrough(r, string(in), n, false)
		if want := r.String(string(in)); out != want {
			t.Fatalf("stream %q != string %q", out, want)
		}
	})
}

// BenchmarkWriter streams agent-like output (JSON lines with URLs, no
// secret) through a redactor built from this process's environment.
func BenchmarkWriter(b *testing.B) {
	r := New(append(os.Environ(), "MY_SERVICE_TOKEN="+fakeService, "ANTHROPIC_API_KEY="+fakeAnthropic), nil, nil)
	line := []byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"see https://example.com/docs and run go test ./... -- task-abcdef: done"}]}}` + "\n")
	chunk := bytes.Repeat(line, (64<<10)/len(line))
	b.SetBytes(int64(len(chunk)))
	w := r.Writer(io.Discard)
	for i := 0; i < b.N; i++ {
		w.Write(chunk)
		w.Flush()
	}
	w.Close()
}

func TestURLMasksEverythingButTheHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://hooks.example.com/T000/B000/XXX":       "https://hooks.example.com/…",
		"https://u:p@hooks.example.com/?token=abc#frag": "https://…@hooks.example.com/?…#…",
		"http://127.0.0.1:8080":                         "http://127.0.0.1:8080",
		"not a url":                                     "…",
		"":                                              "",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Command(`curl -d @- "https://h.example/abc/tok3n12345?x=1" && echo ok`); got != `curl -d @- "https://h.example/…?…" && echo ok` {
		t.Errorf("got %q", got)
	}
	r := New(nil, nil, nil)
	r.AddURL("notify_webhook", "https://hooks.example.com/services/T000/B0001234/XXXXXXXXXXXXXXXXXXXX?sig=s1gnature99")
	out := r.String("error posting to https://hooks.example.com/services/T000/B0001234/XXXXXXXXXXXXXXXXXXXX?sig=s1gnature99; services stay")
	for _, s := range []string{"B0001234", "XXXXXXXXXXXXXXXXXXXX", "s1gnature99"} {
		if strings.Contains(out, s) {
			t.Errorf("%s survived: %s", s, out)
		}
	}
	if !strings.Contains(out, "services stay") {
		t.Errorf("an ordinary word of the path was redacted: %s", out)
	}
}
