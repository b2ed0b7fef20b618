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
