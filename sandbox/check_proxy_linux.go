package sandbox

import (
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"

	"github.com/looprinter/looprinter/sandbox/nshelper"
)

// ThroughProxy turns a check made by a bubblewrap CheckBox without the
// network (CheckNetworkNone) into one whose network namespace holds a
// relay on 127.0.0.1:n.Port to the proxy on n.Socket, its only way out,
// and whose environment names the relay as its proxy (HTTP_PROXY and the
// like): `checks.network: {allow: [...]}`. The namespace stays the
// check's own; the layer helper makes it and runs the relay there, as for
// an agent run. Anything else than such a check is refused: never a check
// with more network than it was made with.
func ThroughProxy(cmd *exec.Cmd, n *Network) error {
	if n == nil || n.Socket == "" || n.Port == 0 {
		return errors.New("sandbox: the checks' proxy is not running")
	}
	at := -1
	for i, kv := range cmd.Env {
		if strings.HasPrefix(kv, EnvCheckLayers+"=") {
			at = i
		}
	}
	if at < 0 {
		return errors.New("sandbox: only a bubblewrap check box can reach the network through the judge's proxy")
	}
	var s layerSpec
	if err := json.Unmarshal([]byte(strings.TrimPrefix(cmd.Env[at], EnvCheckLayers+"=")), &s); err != nil {
		return err
	}
	i := slices.Index(s.Args, "--unshare-net")
	if i < 0 || s.Net != nil {
		return errors.New("sandbox: the check has the host's network: it cannot be confined to the judge's proxy")
	}
	// The helper's namespace is the check's: bubblewrap keeps it.
	s.Args = slices.Delete(slices.Clone(s.Args), i, i+1)
	// The helper starts bubblewrap as its child beside the relay, without
	// the info pipe: the check's end is then waited for by its process
	// group and cgroup.
	if k := slices.Index(s.Args, "--info-fd"); k >= 0 && k+1 < len(s.Args) {
		s.Args = slices.Delete(s.Args, k, k+2)
	}
	s.Net = &nshelper.Net{Socket: n.Socket, Port: n.Port}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	env := slices.Clone(cmd.Env)
	env[at] = EnvCheckLayers + "=" + string(data)
	cmd.Env = append(env, n.Env()...)
	return nil
}
