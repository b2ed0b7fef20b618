// Package loopdir owns a loop's files on disk: where each one is, in the
// loop's folder and in the engine's private folder, and the bounded reads of
// its records. The engine writes through it; the commands, the dashboard,
// the MCP server, the digest and the fleet read through it. No other package
// joins paths under a loop's folders.
//
// A loop's folder holds what people and tools read:
//
//	output/plan.json, output/progress.txt    the agent's plan and notes
//	working-records/*.jsonl                  the records (only indexed files count)
//	working-records/state.json               the public copy of the state
//	working-records/lock                     who runs the loop
//	working-records/transcripts/, checks/    each agent run's transcript, each check's log
//	working-records/review/, review-report.md the review shape's rounds and report
//
// The engine's private folder (Private) holds what an agent must not forge.
package loopdir

import "path/filepath"

// RecordsDir and OutputDir are relative to the loop's folder (git pathspecs
// and messages name them so).
const (
	RecordsDir = "working-records"
	OutputDir  = "output"
	// ReviewDir is the review shape's folder under RecordsDir.
	ReviewDir = "review"
	// ReviewReportFile is the review shape's report under RecordsDir.
	ReviewReportFile = "review-report.md"
)

// Dir is a loop's folder: the folder of its loop file, or where a fleet
// worker runs it.
type Dir string

func (d Dir) join(parts ...string) string {
	return filepath.Join(append([]string{string(d)}, parts...)...)
}

// Records is the folder of the loop's records.
func (d Dir) Records() string { return d.join(RecordsDir) }

// Output is the folder the agent writes its plan and notes in.
func (d Dir) Output() string { return d.join(OutputDir) }

// Plan is the cycle shape's plan.
func (d Dir) Plan() string { return d.join(OutputDir, "plan.json") }

// Progress is where each build run appends what it found.
func (d Dir) Progress() string { return d.join(OutputDir, "progress.txt") }

// State is the public copy of the state, for people and tools to read. The
// engine's authoritative copy is in its private folder (Private.State).
func (d Dir) State() string { return d.join(RecordsDir, "state.json") }

// LockFile is held (flock) by the one engine that runs the loop.
func (d Dir) LockFile() string { return d.join(RecordsDir, "lock") }

// Pause is the loop's pause file, in the engine's private folder
// (Private.Pause).
func (d Dir) Pause() string { return d.Private().Pause() }

// Transcripts holds each agent run's prompt and transcript.
func (d Dir) Transcripts() string { return d.join(RecordsDir, "transcripts") }

// Checks holds each check's log.
func (d Dir) Checks() string { return d.join(RecordsDir, "checks") }

// Review holds the review shape's rounds.
func (d Dir) Review() string { return d.join(RecordsDir, ReviewDir) }

// ReviewReport is the review shape's report.
func (d Dir) ReviewReport() string { return d.join(RecordsDir, ReviewReportFile) }

// Supervisor is the supervisor's memory of what it tried.
func (d Dir) Supervisor() string { return d.join(RecordsDir, "supervisor.json") }

// SupervisorWork is where the supervisor drafts its changes to the loop
// file named file.
func (d Dir) SupervisorWork(file string) string { return d.join(OutputDir, "supervisor", file) }

// InRecords is a file of the records folder by name (an archived plan).
func (d Dir) InRecords(name string) string { return d.join(RecordsDir, name) }

// RecordsAside is where a rollback keeps the records while git resets the
// tree under them.
func (d Dir) RecordsAside() string { return d.join(".looprinter-records-aside") }

// Private is the engine's private folder for this loop.
func (d Dir) Private() Private { return PrivateOf(string(d)) }
