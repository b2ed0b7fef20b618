package review

// State is the review shape's part of state.json: where the review
// stands (step and round) and every round's findings, so a review killed
// mid-round resumes where it was.
type State struct {
	// Step is the next thing to do: start, writer, review, fix, fixcheck, final.
	Step  string `json:"step"`
	Round int    `json:"round"` // current round, from 1

	Base    string `json:"base"`     // the base as given (or chosen)
	BaseSHA string `json:"base_sha"` // the commit (or tree) the diff starts from

	Reviewer string `json:"reviewer,omitempty"` // backend/model, for the report
	Fixer    string `json:"fixer,omitempty"`
	Writer   string `json:"writer,omitempty"`
	Warned   bool   `json:"warned,omitempty"` // the reviewer/fixer notes were recorded

	WriterDone bool `json:"writer_done,omitempty"`

	// Evidence is the latest check evidence, for the next reviewer; Fresh
	// says it was taken on the current tree.
	Evidence      string   `json:"evidence,omitempty"`
	EvidenceFresh bool     `json:"evidence_fresh,omitempty"`
	ChecksPass    bool     `json:"checks_pass,omitempty"`
	FailedChecks  []string `json:"failed_checks,omitempty"`
	CheckSignal   string   `json:"check_signal,omitempty"`

	Rounds   []Round   `json:"rounds,omitempty"`
	FixCheck *FixCheck `json:"fix_check,omitempty"`

	// The end: how the review ended and what is still open.
	EndedBy     string    `json:"ended_by,omitempty"` // clean | fixcheck | rounds | same_set
	Open        []Finding `json:"open,omitempty"`
	FinalChecks []string  `json:"final_checks,omitempty"`
}

// Round is one review round: the reviewer's findings and the fix.
type Round struct {
	N      int    `json:"n"`
	Status string `json:"status"` // reviewing | reviewed | clean | fixed | failed | same_set

	Findings  []Finding    `json:"findings,omitempty"`
	Invalid   []string     `json:"invalid,omitempty"` // why the reviewer's output was refused
	Recurring []Recurrence `json:"recurring,omitempty"`
	Sent      []string     `json:"sent,omitempty"` // ids given to the fixer

	HeadBefore string   `json:"head_before,omitempty"`
	HeadAfter  string   `json:"head_after,omitempty"`
	TreeBefore string   `json:"tree_before,omitempty"`
	TreeAfter  string   `json:"tree_after,omitempty"`
	Commits    []string `json:"commits,omitempty"` // subjects of the fix's commits
	Changed    []string `json:"changed,omitempty"` // files the fixer changed
	ChecksPass *bool    `json:"checks_pass,omitempty"`
}

// Finding is one graded finding, in the schema the reviewer writes.
type Finding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"` // critical | major | minor
	File     string `json:"file"`
	Line     int    `json:"line"`
	Title    string `json:"title"`
	Detail   string `json:"detail"`
	Kind     string `json:"kind"`
}

// Recurrence says a finding came back: same kind, same place, later round.
type Recurrence struct {
	ID      string `json:"id"`       // the finding in this round
	Round   int    `json:"round"`    // the earlier round
	Of      string `json:"of"`       // the earlier finding's id
	OfTitle string `json:"of_title"` // the earlier finding's title
}

// FixCheck is the fix-verification pass after the last round.
type FixCheck struct {
	Findings []Finding `json:"findings"`
	Verdicts []Verdict `json:"verdicts,omitempty"`
	Invalid  []string  `json:"invalid,omitempty"`
	Failed   bool      `json:"failed,omitempty"`
}

// Verdict is the fix check's word on one finding.
type Verdict struct {
	ID     string `json:"id"`
	Status string `json:"status"` // closed | open
	Detail string `json:"detail"`
}
