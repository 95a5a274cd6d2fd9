package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/iosched/iosched/helper/rulesaudit"
)

// errFound makes audit exit 1 without another message.
type errFound struct{ n int }

func (e errFound) Error() string {
	return fmt.Sprintf("%d rule(s) freeze queues on change events", e.n)
}

// cmdAudit reports rules that write a freezing queue attribute with
// ATTR{} on change events. Exit 1 when it finds any, so that a
// distribution can run it in CI.
func cmdAudit(e env, args []string) error {
	fs := newFlagSet("audit")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	var files []string
	if len(pos) == 0 {
		if files, err = rulesaudit.RulesFiles(e.rulesDirs); err != nil {
			return err
		}
	}
	for _, p := range pos {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		more, err := rulesaudit.RulesFiles([]string{p})
		if err != nil {
			return err
		}
		files = append(files, more...)
	}
	n := 0
	for _, f := range files {
		found, err := rulesaudit.File(f)
		if err != nil {
			return err
		}
		for _, fd := range found {
			fmt.Fprintln(e.stdout, fd)
			n++
		}
	}
	if n > 0 {
		fmt.Fprintf(e.stdout, "%d write(s) of freezing queue attributes on change events in %d file(s) checked\n", n, len(files))
		return errFound{n}
	}
	where := fmt.Sprint(e.rulesDirs)
	if len(pos) > 0 {
		where = filepath.Join(pos...)
	}
	fmt.Fprintf(e.stdout, "no rule writes a freezing queue attribute on change events (%d files checked in %s)\n", len(files), where)
	return nil
}
