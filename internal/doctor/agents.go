package doctor

import "github.com/looprinter/looprinter/agent"

// AgentCLI is one of the agent CLIs looprinter drives.
type AgentCLI struct {
	Backend, Program, NPM string
	Version               string   // the version looprinter is tested with
	VersionArgs           []string // make it print its version
	Keys                  []string // environment variables that log it in
	Files                 []string // credential files, relative to the home directory ($VAR/... for a variable's folder)
	Login                 string   // how to log in
}

// AgentCLIs are the CLIs doctor knows how to check: the backends that run
// a CLI of their own, as each declares itself in agent/ (agent.CLIs).
var AgentCLIs = agentCLIs()

func agentCLIs() []AgentCLI {
	var out []AgentCLI
	for _, b := range agent.CLIs() {
		out = append(out, AgentCLI{Backend: b.Name, Program: b.Program, NPM: b.NPMPackage, Version: b.Version, VersionArgs: b.VersionArgs,
			Keys: b.Login.Env, Files: b.Login.Files, Login: b.Login.Hint})
	}
	return out
}

// Install is the command that installs the CLI at the version looprinter
// is tested with.
func (c AgentCLI) Install() string {
	if c.Version == "" {
		return "npm install -g " + c.NPM
	}
	return "npm install -g " + c.NPM + "@" + c.Version
}
