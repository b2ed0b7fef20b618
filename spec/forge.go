package spec

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Forge is the loop file's `forge:`: the code host where the loop's work
// lives (docs/forge.md). GitHub is the one built.
type Forge struct {
	GitHub GitHubForge `yaml:"github"`
	// CI makes the forge's CI a gate after the push (docs/forge.md).
	CI ForgeCI `yaml:"ci"`
	// Review makes review comments on the loop's pull request the next
	// failure signal (docs/forge.md).
	Review ForgeReview `yaml:"review"`
}

// DefaultCIRounds and DefaultPullReviewRounds bound the fix rounds a red CI
// and review comments start when the loop file does not say.
const (
	DefaultCIRounds         = 2
	DefaultPullReviewRounds = 2
)

// ForgeReview is `forge.review`: how many rounds review comments by
// allowed reviewers may start (0: none).
type ForgeReview struct {
	Rounds int `yaml:"rounds"`
	// RoundsSet: the loop file wrote rounds (0 then means none).
	RoundsSet bool `yaml:"-"`
}

// MaxRounds is the number of review rounds (DefaultPullReviewRounds unset).
func (r ForgeReview) MaxRounds() int {
	if !r.RoundsSet {
		return DefaultPullReviewRounds
	}
	return r.Rounds
}

// MaxRounds is the number of fix rounds a red CI may start
// (DefaultCIRounds unset).
func (c ForgeCI) MaxRounds() int {
	if !c.RoundsSet {
		return DefaultCIRounds
	}
	return c.Rounds
}

// ForgeCI is `forge.ci`: after the branch is pushed, the engine waits up
// to Timeout for the pushed commit's check runs and statuses; a red one,
// a Required one missing, or none reported by then keeps the issue from
// done.
type ForgeCI struct {
	Timeout  Duration `yaml:"timeout"`
	Required []string `yaml:"required"`
	// Rounds bounds the fix rounds a red CI starts: its failing jobs' log
	// lines are the next failure signal (unset: DefaultCIRounds; 0:
	// none).
	Rounds int `yaml:"rounds"`
	// RoundsSet: the loop file wrote rounds.
	RoundsSet bool `yaml:"-"`
}

// On says whether CI is a gate.
func (c ForgeCI) On() bool { return c.Timeout > 0 }

// On says whether the loop file names a forge.
func (f Forge) On() bool { return f.GitHub.Repo != "" }

// GitHubForge is `forge.github`: the repository, the API's URL for GitHub
// Enterprise, and who may start work.
type GitHubForge struct {
	// Repo is OWNER/NAME.
	Repo string `yaml:"repo"`
	// BaseURL is the API of a GitHub Enterprise server
	// (https://HOST/api/v3); empty for github.com.
	BaseURL string `yaml:"base_url"`
	// Allow says whose issues may start work; empty (left out): the
	// repository's owner, members and collaborators
	// (DefaultAssociations).
	Allow ForgeAllow `yaml:"allow"`
	// WebhookSecretEnv names the environment variable of `looprinter
	// serve` that holds the webhook's secret (never the secret itself:
	// an agent reads the loop file). Empty: DefaultWebhookSecretEnv.
	WebhookSecretEnv string `yaml:"webhook_secret_env"`
	// Label is the label that starts the loop on an issue: when GitHub's
	// webhook says the issue got it (`looprinter serve`), and the issue
	// `run --next-issue` takes; empty: DefaultLabel.
	Label string `yaml:"label"`
}

// DefaultLabel starts work on an issue when forge.github.label is not
// set.
const DefaultLabel = "looprinter"

// StartLabel is the label that starts work on an issue.
func (g GitHubForge) StartLabel() string {
	if g.Label == "" {
		return DefaultLabel
	}
	return g.Label
}

// DefaultWebhookSecretEnv holds the webhook secret when
// forge.github.webhook_secret_env is not set.
const DefaultWebhookSecretEnv = "LOOPRINTER_WEBHOOK_SECRET"

// SecretEnv is the variable that holds the webhook's secret.
func (g GitHubForge) SecretEnv() string {
	if g.WebhookSecretEnv == "" {
		return DefaultWebhookSecretEnv
	}
	return g.WebhookSecretEnv
}

// ForgeAllow names who may start work: GitHub logins, and authors by their
// association with the repository.
type ForgeAllow struct {
	Logins       []string `yaml:"logins"`
	Associations []string `yaml:"associations"`
}

// DefaultAssociations may start work when forge.github.allow is not set:
// the people with a hand in the repository, not strangers.
var DefaultAssociations = []string{"OWNER", "MEMBER", "COLLABORATOR"}

// Associations are GitHub's author_association values.
var Associations = []string{"OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "FIRST_TIMER", "MANNEQUIN", "NONE"}

// Allowed is who may start work: the loop file's allow, or
// DefaultAssociations when it has none.
func (g GitHubForge) Allowed() ForgeAllow {
	if len(g.Allow.Logins) == 0 && len(g.Allow.Associations) == 0 {
		return ForgeAllow{Associations: DefaultAssociations}
	}
	return g.Allow
}

var (
	envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	ghOwner = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	ghName  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// validRepo says whether s is OWNER/NAME as GitHub spells them.
func validRepo(s string) bool {
	owner, name, ok := strings.Cut(s, "/")
	return ok && ghOwner.MatchString(owner) && ghName.MatchString(name) && name != "." && name != ".."
}

// baseURLProblem says what is wrong with forge.github.base_url: the token
// goes to it, so it must be https (plain http only to this machine, for a
// local test server), with a host and nothing a URL should not hold.
func baseURLProblem(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "not a URL with a host: want https://HOST/api/v3"
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "a user, a query or a fragment in the URL: want https://HOST/api/v3"
	}
	if u.Scheme == "https" {
		return ""
	}
	if u.Scheme == "http" && loopbackHost(u.Hostname()) {
		return ""
	}
	return "the token is sent to this URL: want https (plain http only to 127.0.0.1, ::1 or localhost)"
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// validateForge checks forge:.
// nodes say which fields the file wrote (an empty github: or allow: is
// written, and wrong).
func (l *Loop) validateForge(nodes map[string]*yaml.Node, at func(path, format string, args ...any)) {
	g := l.Forge.GitHub
	_, github := nodes["forge.github"]
	if _, set := nodes["forge.ci"]; set {
		if !github {
			at("forge.ci", "forge.ci: the CI of which repository? add forge.github.repo")
		}
		if l.Forge.CI.Timeout <= 0 {
			at("forge.ci.timeout", "forge.ci.timeout: want how long to wait for the pushed commit's CI, like 30m")
		}
		_, l.Forge.CI.RoundsSet = nodes["forge.ci.rounds"]
		if r := l.Forge.CI.Rounds; r < 0 || r > 20 {
			at("forge.ci.rounds", "forge.ci.rounds: %d: want from 0 (no fix round) to 20", r)
		}
		for i, name := range l.Forge.CI.Required {
			if strings.TrimSpace(name) == "" {
				at(fmt.Sprintf("forge.ci.required[%d]", i), "forge.ci.required[%d] is empty: name a check run or a status context", i)
			}
		}
	}
	if _, set := nodes["forge.review"]; set && !github {
		at("forge.review", "forge.review: the pull requests of which repository? add forge.github.repo")
	}
	_, l.Forge.Review.RoundsSet = nodes["forge.review.rounds"]
	if r := l.Forge.Review.Rounds; r < 0 || r > 20 {
		at("forge.review.rounds", "forge.review.rounds: %d: want from 0 (review comments start nothing) to 20", r)
	}
	if !github {
		return
	}
	if v := g.WebhookSecretEnv; v != "" && !envName.MatchString(v) {
		at("forge.github.webhook_secret_env", "forge.github.webhook_secret_env: %q is not an environment variable's name", v)
	}
	if g.Label != "" && (strings.TrimSpace(g.Label) != g.Label || len(g.Label) > 50) {
		at("forge.github.label", "forge.github.label: %q: want a label's name (no spaces around it, at most 50 characters)", g.Label)
	}
	if !validRepo(g.Repo) {
		at("forge.github.repo", "forge.github.repo: %q is not a repository: want OWNER/NAME, e.g. acme/widget", g.Repo)
	}
	if g.BaseURL != "" {
		if why := baseURLProblem(g.BaseURL); why != "" {
			at("forge.github.base_url", "forge.github.base_url: %s", why)
		}
	}
	for i, login := range g.Allow.Logins {
		if !ghOwner.MatchString(strings.TrimSuffix(login, "[bot]")) {
			at(fmt.Sprintf("forge.github.allow.logins[%d]", i), "forge.github.allow.logins[%d]: %q is not a GitHub login", i, login)
		}
	}
	for i, a := range g.Allow.Associations {
		if !contains(Associations, strings.ToUpper(a)) {
			at(fmt.Sprintf("forge.github.allow.associations[%d]", i), "forge.github.allow.associations[%d]: %q is not known (%s)", i, a, strings.Join(Associations, ", "))
		}
	}
	if _, set := nodes["forge.github.allow"]; set && len(g.Allow.Logins) == 0 && len(g.Allow.Associations) == 0 {
		at("forge.github.allow", "forge.github.allow names nobody: no issue could start work; name logins or associations, or leave allow out (%s)", strings.Join(DefaultAssociations, ", "))
	}
}
