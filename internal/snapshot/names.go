package snapshot

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Kind says why a snapshot was taken. It follows from the snapshot's name.
type Kind string

// The kinds of snapshot, one per name form.
const (
	KindTaskPre       Kind = "task-pre"       // task-N-pre: before task N starts
	KindTaskPost      Kind = "task-post"      // task-N-post: after task N passed its gates
	KindManual        Kind = "manual"         // manual-<unix>: asked for by a person or the agent
	KindStallRecovery Kind = "stall-recovery" // stall-N-recovery: before stall recovery in task N
	KindRollback      Kind = "rollback"       // rollback-<unix>: the state a rollback replaced
)

// NameForms describes the names ralph accepts, for error messages and help.
const NameForms = "task-N-pre, task-N-post, manual-<unix>, stall-N-recovery, rollback-<unix>"

var (
	taskRE     = regexp.MustCompile(`^task-([0-9]{1,9})-(pre|post)$`)
	stallRE    = regexp.MustCompile(`^stall-([0-9]{1,9})-recovery$`)
	manualRE   = regexp.MustCompile(`^manual-[0-9]{1,19}(-[0-9]{1,6})?$`)
	rollbackRE = regexp.MustCompile(`^rollback-[0-9]{1,19}(-[0-9]{1,6})?$`)
)

// TaskPre names the snapshot taken before task n starts.
func TaskPre(n int) string { return fmt.Sprintf("task-%d-pre", n) }

// TaskPost names the snapshot taken after task n passed its gates.
func TaskPost(n int) string { return fmt.Sprintf("task-%d-post", n) }

// Manual names an explicit snapshot taken at t.
func Manual(t time.Time) string { return fmt.Sprintf("manual-%d", t.Unix()) }

// StallRecovery names the snapshot taken before stall recovery in task n.
func StallRecovery(n int) string { return fmt.Sprintf("stall-%d-recovery", n) }

// Rollback names the automatic snapshot a rollback at t takes of the state
// it replaces.
func Rollback(t time.Time) string { return fmt.Sprintf("rollback-%d", t.Unix()) }

// ValidName reports whether name is one of ralph's snapshot name forms (see
// NameForms). Manual and rollback names may carry a "-2", "-3"… suffix that
// Save adds when two are taken in the same second. Nothing else is a valid
// name: no slashes, dots, spaces or leading dashes can get through.
func ValidName(name string) bool {
	_, _, ok := ParseName(name)
	return ok
}

// ParseName returns the kind of a snapshot name and, for task and stall
// names, the task number. ok is false when name is not a valid name.
func ParseName(name string) (kind Kind, task int, ok bool) {
	if m := taskRE.FindStringSubmatch(name); m != nil {
		n, _ := strconv.Atoi(m[1])
		if m[2] == "pre" {
			return KindTaskPre, n, true
		}
		return KindTaskPost, n, true
	}
	if m := stallRE.FindStringSubmatch(name); m != nil {
		n, _ := strconv.Atoi(m[1])
		return KindStallRecovery, n, true
	}
	if manualRE.MatchString(name) {
		return KindManual, 0, true
	}
	if rollbackRE.MatchString(name) {
		return KindRollback, 0, true
	}
	return "", 0, false
}

// uniqueKind reports whether names of kind carry a timestamp, so that a
// taken name is made unique with a suffix rather than refused.
func uniqueKind(k Kind) bool { return k == KindManual || k == KindRollback }
