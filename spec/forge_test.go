package spec

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestForgeForms(t *testing.T) {
	l, err := Parse([]byte("objective: x\nverify: [true]\n"), "/l/loop.yaml")
	if err != nil || l.Forge.On() {
		t.Fatalf("no forge: %+v, %v", l.Forge, err)
	}
	l, err = Parse([]byte("objective: x\nverify: [true]\nforge: {github: {repo: acme/widget}}\n"), "/l/loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g := l.Forge.GitHub
	if g.Repo != "acme/widget" || g.BaseURL != "" || g.Allow.Logins != nil || g.Allow.Associations != nil || !l.Forge.On() {
		t.Fatalf("forge %+v", g)
	}
	if got := g.Allowed(); !reflect.DeepEqual(got, ForgeAllow{Associations: []string{"OWNER", "MEMBER", "COLLABORATOR"}}) {
		t.Fatalf("default allow %+v", got)
	}
	l, err = Parse([]byte(`objective: x
verify: [true]
forge:
  github:
    repo: Acme-Corp/widget.go_v2
    base_url: https://ghe.example.com/api/v3
    allow: {logins: [alice, "dependabot[bot]"], associations: [owner]}
`), "/l/loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g = l.Forge.GitHub
	if g.BaseURL != "https://ghe.example.com/api/v3" || !reflect.DeepEqual(g.Allowed(), ForgeAllow{Logins: []string{"alice", "dependabot[bot]"}, Associations: []string{"owner"}}) {
		t.Fatalf("forge %+v allow %+v", g, g.Allowed())
	}
	l, err = Parse([]byte("objective: x\nverify: [true]\nforge: {github: {repo: a/b}, ci: {timeout: 20m, required: [test, lint]}}\n"), "/l/loop.yaml")
	if err != nil || !l.Forge.CI.On() || l.Forge.CI.Timeout.D() != 20*time.Minute || !reflect.DeepEqual(l.Forge.CI.Required, []string{"test", "lint"}) {
		t.Fatalf("ci %+v, %v", l.Forge.CI, err)
	}
	if (ForgeCI{}).On() {
		t.Fatal("CI on without a timeout")
	}
	for _, base := range []string{"http://127.0.0.1:8080/api/v3", "http://localhost:1/", "http://[::1]:9/api/v3", "https://api.github.com/"} {
		if _, err := Parse([]byte("objective: x\nverify: [true]\nforge: {github: {repo: a/b, base_url: '"+base+"'}}\n"), "/l/loop.yaml"); err != nil {
			t.Errorf("base_url %s: %v", base, err)
		}
	}
	for _, repo := range []string{"a/b", "a-1/.github", "A/b..c", strings.Repeat("o", 39) + "/" + strings.Repeat("n", 100)} {
		if _, err := Parse([]byte("objective: x\nverify: [true]\nforge: {github: {repo: '"+repo+"'}}\n"), "/l/loop.yaml"); err != nil {
			t.Errorf("repo %s: %v", repo, err)
		}
	}
	for _, a := range Associations {
		if _, err := Parse([]byte("objective: x\nverify: [true]\nforge: {github: {repo: a/b, allow: {associations: ["+a+"]}}}\n"), "/l/loop.yaml"); err != nil {
			t.Errorf("association %s: %v", a, err)
		}
	}
}

func TestForgeBadInput(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"forge: {github: {}}\n", `loop.yaml:3:17: forge.github.repo: "" is not a repository: want OWNER/NAME`},
		{"forge: {github: {repo: acme}}\n", `loop.yaml:3:24: forge.github.repo: "acme" is not a repository`},
		{"forge: {github: {repo: acme/}}\n", `forge.github.repo: "acme/"`},
		{"forge: {github: {repo: /widget}}\n", `forge.github.repo: "/widget"`},
		{"forge: {github: {repo: a/b/c}}\n", `forge.github.repo: "a/b/c"`},
		{"forge: {github: {repo: -a/b}}\n", `forge.github.repo: "-a/b"`},
		{"forge: {github: {repo: a/..}}\n", `forge.github.repo: "a/.."`},
		{"forge: {github: {repo: a/.}}\n", `forge.github.repo: "a/."`},
		{"forge: {github: {repo: '" + strings.Repeat("o", 40) + "/b'}}\n", `is not a repository`},
		{"forge: {github: {repo: 'a/" + strings.Repeat("n", 101) + "'}}\n", `is not a repository`},
		{"forge: {github: {repo: 'a/b c'}}\n", `forge.github.repo: "a/b c"`},
		{"forge: {github: {repo: a/b, base_url: 'http://ghe.example.com/api/v3'}}\n", `loop.yaml:3:39: forge.github.base_url: the token is sent to this URL: want https`},
		{"forge: {github: {repo: a/b, base_url: 'http://10.0.0.1/api/v3'}}\n", `want https (plain http only to 127.0.0.1`},
		{"forge: {github: {repo: a/b, base_url: 'ftp://x.example/'}}\n", `want https`},
		{"forge: {github: {repo: a/b, base_url: 'ghe.example.com'}}\n", `forge.github.base_url: not a URL with a host`},
		{"forge: {github: {repo: a/b, base_url: 'https://'}}\n", `not a URL with a host`},
		{"forge: {github: {repo: a/b, base_url: 'https:opaque'}}\n", `not a URL with a host`},
		{"forge: {github: {repo: a/b, base_url: '%zz'}}\n", `not a URL with a host`},
		{"forge: {github: {repo: a/b, base_url: 'https://u:p@ghe.example.com/'}}\n", `a user, a query or a fragment`},
		{"forge: {github: {repo: a/b, base_url: 'https://ghe.example.com/?x=1'}}\n", `a user, a query or a fragment`},
		{"forge: {github: {repo: a/b, base_url: 'https://ghe.example.com/#f'}}\n", `a user, a query or a fragment`},
		{"forge: {github: {repo: a/b, allow: {logins: [ok, 'bad login']}}}\n", `loop.yaml:3:50: forge.github.allow.logins[1]: "bad login" is not a GitHub login`},
		{"forge: {github: {repo: a/b, allow: {associations: [OWNER, everyone]}}}\n", `forge.github.allow.associations[1]: "everyone" is not known (OWNER, MEMBER`},
		{"forge: {github: {repo: a/b, allow: {}}}\n", `loop.yaml:3:36: forge.github.allow names nobody`},
		{"forge: {github: {repo: a/b, allow: {logins: []}}}\n", `forge.github.allow names nobody: no issue could start work; name logins or associations, or leave allow out (OWNER, MEMBER, COLLABORATOR)`},
		{"forge: {gitlab: {repo: a/b}}\n", `unknown field "gitlab" in forge`},
		{"forge: {github: {repo: a/b, token: x}}\n", `unknown field "token" in forge.github`},
		{"forge: github\n", `forge: want a mapping of fields`},
		{"forge: {github: {repo: a/b}, ci: {}}\n", `loop.yaml:3:34: forge.ci.timeout: want how long to wait for the pushed commit's CI, like 30m`},
		{"forge: {github: {repo: a/b}, ci: {timeout: 0s}}\n", `forge.ci.timeout: want how long`},
		{"forge: {github: {repo: a/b}, ci: {timeout: 10m, required: [test, ' ']}}\n", `forge.ci.required[1] is empty: name a check run or a status context`},
		{"forge: {ci: {timeout: 10m}}\n", `loop.yaml:3:13: forge.ci: the CI of which repository? add forge.github.repo`},
		{"forge: {github: {repo: a/b}, ci: {timeout: 10m, rounds: -1}}\n", `loop.yaml:3:57: forge.ci.rounds: -1: want from 0 (no fix round) to 20`},
		{"forge: {github: {repo: a/b}, ci: {timeout: 10m, rounds: 21}}\n", `forge.ci.rounds: 21: want from 0`},
		{"forge: {github: {repo: a/b}, review: {rounds: 99}}\n", `forge.review.rounds: 99: want from 0 (review comments start nothing) to 20`},
		{"forge: {review: {rounds: 1}}\n", `forge.review: the pull requests of which repository? add forge.github.repo`},
		{"forge: {github: {repo: a/b, webhook_secret_env: 'MY SECRET'}}\n", `forge.github.webhook_secret_env: "MY SECRET" is not an environment variable's name`},
		{"forge: {github: {repo: a/b, label: ' x'}}\n", `forge.github.label: " x": want a label's name`},
		{"forge: {github: {repo: a/b}, ci: {timeout: 10m, retries: 2}}\n", `unknown field "retries" in forge.ci`},
	} {
		_, err := Parse([]byte("objective: x\nverify: [true]\n"+c.yaml), "/l/loop.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}

func TestForgeLoopbackHosts(t *testing.T) {
	for h, want := range map[string]bool{"localhost": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true, "10.0.0.1": false, "example.com": false, "localhost.example.com": false, "": false} {
		if got := loopbackHost(h); got != want {
			t.Errorf("loopbackHost(%q) = %v", h, got)
		}
	}
	if !validRepo("a/b") || validRepo("ab") || validRepo("a/b/") {
		t.Error("validRepo")
	}
	if baseURLProblem("https://ghe.example.com/api/v3") != "" || baseURLProblem("http://127.0.0.1:1/") != "" {
		t.Error("baseURLProblem refused a good URL")
	}
}

func TestForgeRounds(t *testing.T) {
	l, err := Parse([]byte("objective: x\nverify: [true]\nforge: {github: {repo: a/b}, ci: {timeout: 1m}}\n"), "/l/loop.yaml")
	if err != nil || l.Forge.CI.MaxRounds() != DefaultCIRounds || l.Forge.Review.MaxRounds() != DefaultPullReviewRounds {
		t.Fatalf("unset: ci %d review %d, %v", l.Forge.CI.MaxRounds(), l.Forge.Review.MaxRounds(), err)
	}
	if l.Forge.GitHub.SecretEnv() != DefaultWebhookSecretEnv {
		t.Fatalf("secret env %q", l.Forge.GitHub.SecretEnv())
	}
	l, err = Parse([]byte("objective: x\nverify: [true]\nforge: {github: {repo: a/b, webhook_secret_env: HOOK, label: looprinter}, ci: {timeout: 1m, rounds: 0}, review: {rounds: 3}}\n"), "/l/loop.yaml")
	if err != nil || l.Forge.CI.MaxRounds() != 0 || l.Forge.Review.MaxRounds() != 3 || l.Forge.GitHub.SecretEnv() != "HOOK" || l.Forge.GitHub.Label != "looprinter" {
		t.Fatalf("set: ci %d review %d %+v, %v", l.Forge.CI.MaxRounds(), l.Forge.Review.MaxRounds(), l.Forge.GitHub, err)
	}
}
