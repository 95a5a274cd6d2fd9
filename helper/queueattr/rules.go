package queueattr

import (
	"bytes"
	"fmt"
	"strings"
)

//go:generate go run ./internal/genrules ../../rules.d/99-iosched-run.rules ../../completion/iosched.bash

// RunRulesPath is where RunRules is written, from the repository's root.
const RunRulesPath = "rules.d/99-iosched-run.rules"

// CompletionPath is the bash completion, whose attribute list
// CompletionLine renders.
const CompletionPath = "completion/iosched.bash"

// completionVar starts the one line of the completion that lists the
// attributes.
const completionVar = "_iosched_attrs="

// CompletionLine renders that line: every attribute Lookup knows besides
// iosched/NAME.
func CompletionLine() string {
	return completionVar + `"` + strings.Join(Names(), " ") + `"`
}

// SetCompletionLine returns the completion script with its attribute
// line replaced by CompletionLine, or an error if it has none.
func SetCompletionLine(script []byte) ([]byte, error) {
	lines := strings.Split(string(script), "\n")
	for i, l := range lines {
		if t := strings.TrimLeft(l, "\t "); strings.HasPrefix(t, completionVar) {
			lines[i] = l[:len(l)-len(t)] + CompletionLine()
			return []byte(strings.Join(lines, "\n")), nil
		}
	}
	return nil, fmt.Errorf("%s: no line starting with %s", CompletionPath, completionVar)
}

// RunRules renders rules.d/99-iosched-run.rules: the rule that starts the
// helper when a disk has any setting it can compare (one line per
// attribute and tunable this package knows), or a scheduler list whose
// first choice is not active yet.
func RunRules() []byte {
	var b bytes.Buffer
	b.WriteString(runRulesHead)
	for _, n := range Names() {
		fmt.Fprintf(&b, "ENV{%s}==\"?*\", GOTO=\"iosched_run\"\n", Property(n))
	}
	for _, n := range sortedKeys(tunables) {
		fmt.Fprintf(&b, "ENV{%s}==\"?*\", GOTO=\"iosched_run\"\n", Property(TunablePrefix+n))
	}
	b.WriteString(runRulesTail)
	return b.Bytes()
}

const runRulesHead = `# Generated from helper/queueattr by ` + "`go generate ./helper/queueattr`" + `:
# do not edit by hand (helper/queueattr/rules_test.go checks it).
#
# iosched: apply IOSCHED_SCHEDULER (set by 60-iosched.rules and any
# override sorting between the two files) with the iosched-udev helper.
#
# This file sorts late so that it sees the final list. It starts the
# helper only when the disk does not already run the first choice: udev
# reads queue/scheduler (a read never freezes the queue) and a glob settles
# the common case with no process at all. In udev globs "[" opens a class,
# so "*[[]bfq[]]*" matches the bracketed, active name. A first choice not
# listed below (none, mq-deadline or its alias deadline, bfq, kyber: the
# kernel's own schedulers) just starts the helper, which compares first.

ACTION!="add|change", GOTO="iosched_run_end"
SUBSYSTEM!="block", GOTO="iosched_run_end"
ENV{DEVTYPE}!="disk", GOTO="iosched_run_end"
# Only a queue with a scheduler file. A read, not TEST's stat: udev keeps
# the value for the rest of the event, and 60-iosched.rules read it first.
# So what is compared below is the scheduler of the event's start: an
# ATTR{queue/scheduler}= write of another rule in the same event does not
# update it (systemd 257). A rule that iosched audit --fix converted after
# such a write also sets IOSCHED_SETTINGS="1".
ATTR{queue/scheduler}=="?*", GOTO="iosched_run_queue"
GOTO="iosched_run_end"
LABEL="iosched_run_queue"

# Queue attributes or scheduler tunables asked for: udev cannot compare
# those, the helper does, on every event. One line per name iosched knows
# (helper/queueattr); a rule that sets any other IOSCHED_TUNE_* also sets
# IOSCHED_SETTINGS="1", and so does a converted scheduler write that an
# unconverted one precedes (the helper reads the scheduler itself).
ENV{IOSCHED_SETTINGS}=="?*", GOTO="iosched_run"
# The kernel command line's iosched.scheduler names disks
# (60-iosched.rules): udev cannot pick this disk's entry, the helper does.
ENV{` + CmdlineProperty + `}=="?*", GOTO="iosched_run"
`

const runRulesTail = `
# Unset or empty list: no policy, or opted out.
ENV{IOSCHED_SCHEDULER}!="?*", GOTO="iosched_run_end"
# Nothing to choose from.
ATTR{queue/scheduler}=="none", GOTO="iosched_run_end"

# The first choice is already active.
ENV{IOSCHED_SCHEDULER}=="none|none,*", ATTR{queue/scheduler}=="*[[]none[]]*", GOTO="iosched_run_end"
ENV{IOSCHED_SCHEDULER}=="mq-deadline|mq-deadline,*|deadline|deadline,*", ATTR{queue/scheduler}=="*[[]mq-deadline[]]*", GOTO="iosched_run_end"
ENV{IOSCHED_SCHEDULER}=="bfq|bfq,*", ATTR{queue/scheduler}=="*[[]bfq[]]*", GOTO="iosched_run_end"
ENV{IOSCHED_SCHEDULER}=="kyber|kyber,*", ATTR{queue/scheduler}=="*[[]kyber[]]*", GOTO="iosched_run_end"

# A change event where the first choice is a module the kernel still does
# not list (the add event already asked for it) and the second is active:
# the helper would only fall back to what runs.
ACTION=="change", ENV{IOSCHED_SCHEDULER}=="bfq,mq-deadline|bfq,mq-deadline,*", ATTR{queue/scheduler}!="*bfq*", ATTR{queue/scheduler}=="*[[]mq-deadline[]]*", GOTO="iosched_run_end"
ACTION=="change", ENV{IOSCHED_SCHEDULER}=="kyber,none|kyber,none,*", ATTR{queue/scheduler}!="*kyber*", ATTR{queue/scheduler}=="*[[]none[]]*", GOTO="iosched_run_end"

LABEL="iosched_run"
RUN+="iosched-udev"

LABEL="iosched_run_end"
`
