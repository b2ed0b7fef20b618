package agent

import (
	"reflect"
	"testing"
)

func TestNetworkHosts(t *testing.T) {
	got := NetworkHosts("claude", map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:8123/", "OTHER": "http://x"})
	if !reflect.DeepEqual(got, []string{"api.anthropic.com", "console.anthropic.com", "127.0.0.1:8123"}) {
		t.Errorf("claude: %v", got)
	}
	if got := NetworkHosts("codex", map[string]string{CodexBaseURLEnv: "https://gw.example/v1"}); got[len(got)-1] != "gw.example:443" {
		t.Errorf("codex: %v", got)
	}
	if got := NetworkHosts("gemini", map[string]string{"GOOGLE_GEMINI_BASE_URL": "not a url"}); len(got) != 4 {
		t.Errorf("gemini: %v", got)
	}
	if got := NetworkHosts("command", nil); len(got) != 0 {
		t.Errorf("command: %v", got)
	}
}

// An endpoint set in the engine's environment is the agent's too (it
// inherits it): allowed as agent.env's is, unless agent.env sets the
// variable itself (then the agent sees agent.env's).
func TestNetworkHostsFromEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "https://gateway.example.com")
	t.Setenv("OPENAI_BASE_URL", "http://10.1.2.3:8080/v1")
	got := NetworkHosts("claude", nil)
	if !reflect.DeepEqual(got, []string{"api.anthropic.com", "console.anthropic.com", "gateway.example.com:443"}) {
		t.Errorf("claude from the environment: %v", got)
	}
	got = NetworkHosts("claude", map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"})
	if !reflect.DeepEqual(got, []string{"api.anthropic.com", "console.anthropic.com", "127.0.0.1:9"}) {
		t.Errorf("agent.env over the environment: %v", got)
	}
	if got := NetworkHosts("codex", nil); got[len(got)-1] != "10.1.2.3:8080" {
		t.Errorf("codex from the environment: %v", got)
	}
}
