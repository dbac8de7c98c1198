package store

import "context"

// ConflictAttempts bounds every read-decide-write loop over one document:
// how many times a conditional write that met a newer revision is read and
// tried again before the conflict is returned to the caller. Writers of one
// task are few (a runner, its lease renewal, a person's Persephone tool), so
// a loop that still conflicts after this many rounds is contention worth
// reporting, not waiting out.
const ConflictAttempts = 25

// RetryConflicts runs attempt until it returns something other than a
// conflict (IsConflict), at most ConflictAttempts times. Each attempt must
// read the document afresh and write conditionally on the revision it read.
// The last conflict is returned when the bound is reached; a done context
// stops the loop with its error.
func RetryConflicts(ctx context.Context, attempt func() error) error {
	var err error
	for i := 0; i < ConflictAttempts; i++ {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err = attempt(); !IsConflict(err) {
			return err
		}
	}
	return err
}
