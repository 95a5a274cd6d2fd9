// Command settings prints the settings the kernel measurement
// (test/vm/kernels) times, one a line, from the helper's own lists
// (package queueattr), so the list has one home:
//
//	attr NAME               a writable file queue/NAME
//	sched NAME              queue/scheduler, NAME written while NAME is active
//	tune SCHEDULER NAME     queue/iosched/NAME while SCHEDULER is active
package main

import (
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/iosched/iosched/helper/queueattr"
)

func main() {
	if len(os.Args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: settings")
		os.Exit(2)
	}
	if err := write(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "settings:", err)
		os.Exit(1)
	}
}

// schedulers lists "none" and every scheduler with known tunables, sorted.
func schedulers() []string {
	s := make([]string, 0, len(queueattr.Tunables))
	for name := range queueattr.Tunables {
		s = append(s, name)
	}
	sort.Strings(s)
	return append([]string{"none"}, s...)
}

func write(w io.Writer) error {
	for _, name := range queueattr.Names() {
		if _, err := fmt.Fprintln(w, "attr", name); err != nil {
			return err
		}
	}
	for _, s := range schedulers() {
		if _, err := fmt.Fprintln(w, "sched", s); err != nil {
			return err
		}
	}
	for _, s := range schedulers() {
		for _, t := range queueattr.Tunables[s] {
			if _, err := fmt.Fprintln(w, "tune", s, t); err != nil {
				return err
			}
		}
	}
	return nil
}
