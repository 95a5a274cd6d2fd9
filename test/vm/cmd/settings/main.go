// Command settings prints the settings the kernel measurement
// (test/vm/kernels) times, one a line, from the helper's own lists
// (package queueattr), so the list has one home:
//
//	attr NAME               a writable file queue/NAME
//	sched NAME              queue/scheduler, NAME written while NAME is active
//	tune SCHEDULER NAME     queue/iosched/NAME while SCHEDULER is active
//
// With -table TSV it prints instead the rows of docs/kernels.md's table:
// one a setting, in the same order, with a cell for each kernel of TSV
// (helper/queueattr/kernels.tsv as the measurement wrote it), as
// queueattr.Measurement.Cell shows it ("-" where that kernel has no line).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"strings"

	"github.com/iosched/iosched/helper/queueattr"
)

func main() {
	log.SetPrefix("settings: ")
	log.SetFlags(0)
	table := flag.String("table", "", "print the table rows of the measurements in this kernels.tsv")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: settings [-table TSV]")
		os.Exit(2)
	}
	if err := run(os.Stdout, *table); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer, tsv string) error {
	if tsv == "" {
		return write(w)
	}
	f, err := os.Open(tsv)
	if err != nil {
		return err
	}
	defer f.Close()
	ks, err := queueattr.ParseMeasured(tsv, f)
	if err != nil {
		return err
	}
	return writeTable(w, ks)
}

// setting is one line of the list: its kind and names.
type setting struct{ kind, a, b string }

// key is the setting as kernels.tsv names it (queueattr.Measurement.Key).
func (s setting) key() string {
	switch s.kind {
	case "sched":
		return queueattr.Scheduler + "=" + s.a
	case "tune":
		return s.a + ":" + queueattr.TunablePrefix + s.b
	}
	return s.a
}

// row is the setting as the table's first column names it.
func (s setting) row() string {
	switch s.kind {
	case "sched":
		return fmt.Sprintf("scheduler: %s -> %s", s.a, s.a)
	case "tune":
		return fmt.Sprintf("%s%s (%s)", queueattr.TunablePrefix, s.b, s.a)
	}
	return s.a
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

func settings() []setting {
	var l []setting
	for _, name := range queueattr.Names() {
		l = append(l, setting{kind: "attr", a: name})
	}
	for _, s := range schedulers() {
		l = append(l, setting{kind: "sched", a: s})
	}
	for _, s := range schedulers() {
		for _, t := range queueattr.Tunables[s] {
			l = append(l, setting{kind: "tune", a: s, b: t})
		}
	}
	return l
}

func write(w io.Writer) error {
	for _, s := range settings() {
		if _, err := fmt.Fprintln(w, strings.TrimSpace(s.kind+" "+s.a+" "+s.b)); err != nil {
			return err
		}
	}
	return nil
}

func writeTable(w io.Writer, ks []queueattr.MeasuredKernel) error {
	for _, s := range settings() {
		line := "| " + s.row() + " |"
		for _, k := range ks {
			c := "-"
			if m, ok := k.Row(s.key()); ok {
				c = m.Cell()
			}
			line += " " + c + " |"
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
