package confine

import (
	"slices"
	"testing"
)

// The folders the sandbox leaves writable: HOME, each backend's own
// variables as it declares them in agent/, then the usual ones, in this
// order.
func TestWritableTreesReadTheBackends(t *testing.T) {
	keys := []string{"HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
		"XDG_DATA_HOME", "GOCACHE", "GOMODCACHE", "GOPATH", "npm_config_cache"}
	env := map[string]string{}
	var want []string
	for _, k := range keys {
		env[k] = "/trees/" + k
		want = append(want, "/trees/"+k)
	}
	if got := WritableTrees(env); !slices.Equal(got, want) {
		t.Errorf("writable trees %v, want %v", got, want)
	}
}
