package loop

import rollbacks "github.com/looprinter/looprinter/rollback"

// keptTests and noteTests keep the names the ledger tests call rollback's
// ranking counts by (rollback.CopyTests,
// rollback.NoteTests).
func keptTests(m map[string]int) map[string]int { return rollbacks.CopyTests(m) }

func noteTests(tests map[string]int, r CheckResult) { rollbacks.NoteTests(tests, r) }
