package loop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/spec"
)

func TestRedactorSeesEveryAgentsEnvAndTheNotifyURLs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "loop.yaml")
	os.WriteFile(path, []byte(`objective: x
verify: ["true"]
agent: {backend: command, command: x, env: {DEPLOY_PASSWORD: "role-env-secret-1"}}
agents: {build: {env: {OTHER: "not-a-secret-name", PLAN_TOKEN: "role-env-secret-2"}}}
redact: {names: [OTHER]}
notify: {webhook: "https://hooks.example.com/services/whTOKEN0099887766?sig=abc123def456"}
`), 0o644)
	l, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r := Redactor(l)
	in := "a role-env-secret-1 b role-env-secret-2 c not-a-secret-name d whTOKEN0099887766 e abc123def456"
	out := r.String(in)
	for _, s := range []string{"role-env-secret-1", "role-env-secret-2", "not-a-secret-name", "whTOKEN0099887766", "abc123def456"} {
		if strings.Contains(out, s) {
			t.Errorf("%s survived: %s", s, out)
		}
	}
	if !strings.Contains(out, "[REDACTED:DEPLOY_PASSWORD]") || !strings.Contains(out, "[REDACTED:notify_webhook]") {
		t.Errorf("got %s", out)
	}
	l.Redact.Off = true
	if Redactor(l) != nil {
		t.Error("redact: off still redacts")
	}
}

// A check that prints a secret split across two writes of its output: the
// log, the failure signal and the lines kept hold none of it.
func TestCheckOutputIsRedactedBeforeItIsRead(t *testing.T) {
	dir := t.TempDir()
	secret := "svc-FAKE-7f3a9c21e8b4-abcdef"
	t.Setenv("MY_SERVICE_TOKEN", secret)
	l := &spec.Loop{Dir: dir}
	red := Redactor(l)
	log := filepath.Join(dir, "check.log")
	cmd := `head -c 4079 /dev/zero | tr '\0' x; printf '\nFAIL: %s' "$(printf %s "$MY_SERVICE_TOKEN" | cut -c1-10)"; sleep 0.2; printf '%s\n' "$(printf %s "$MY_SERVICE_TOKEN" | cut -c11-)"; exit 1`
	res := judge.Check(context.Background(), judge.CheckRequest{Loop: &spec.Loop{Dir: dir, CheckTimeout: spec.Duration(time.Minute)}, Cmds: []string{cmd}, LogPath: func(int) string { return log }, Env: os.Environ(), Redactor: red, Unconfined: true})[0]
	data, _ := os.ReadFile(log)
	for where, text := range map[string]string{"log": string(data), "signal": res.Signal, "lines": strings.Join(res.Lines, "\n")} {
		if strings.Contains(text, "7f3a9c21e8b4") {
			t.Errorf("the %s holds the secret", where)
		}
		if !strings.Contains(text, "FAIL: [REDACTED:MY_SERVICE_TOKEN]") {
			t.Errorf("the %s lacks the redaction: %.200q", where, text[max(0, len(text)-200):])
		}
	}
}
