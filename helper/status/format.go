package status

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// Write prints rows in format: "table" (the default), "json", or
// "prometheus" (node_exporter's textfile collector).
func (s Source) Write(w io.Writer, rows []Row, format string) error {
	// One write(2) for the whole table, not one per cell.
	out := bufio.NewWriter(w)
	switch format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return err
		}
		return out.Flush()
	case "prometheus":
		s.prometheus(out, rows)
		return out.Flush()
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DISK\tACTIVE\tOFFERED\tROTATIONAL\tWANTED\tFROM\tHOLDS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(r.Disk), cell(dash(r.Active)),
			cell(dash(strings.Join(r.Offered, ","))), yesNo(r.Rotational), cell(wantedText(r)), cell(dash(r.From)), yesNo(r.Holds))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		for _, other := range r.Writers {
			fmt.Fprintf(out, "%s: drifted; %s\n", cell(r.Disk), cell(other))
		}
	}
	return out.Flush()
}

// cell shows a value in the table as it is when it is printable UTF-8,
// else Go-quoted: a value from a hostile udev database must not move
// the cursor, clear the screen or break the columns (tabs, escapes).
func cell(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b *bool) string {
	switch {
	case b == nil:
		return "-"
	case *b:
		return "yes"
	}
	return "no"
}

func wantedText(r Row) string {
	switch {
	case r.Wanted == nil && r.NoUdevDB:
		return "?"
	case r.Wanted == nil:
		return "-"
	case *r.Wanted == "":
		return "(opted out)"
	}
	return *r.Wanted
}

// prometheus prints the status rows in the Prometheus text
// exposition format, for node_exporter's textfile collector. The disk is
// the "device" label, as in node_exporter's own node_disk_* series, so
// the two join. Strings go into labels of an _info gauge; a series whose
// value is unknown is left out rather than guessed.
func (s Source) prometheus(w io.Writer, rows []Row) {
	family := func(name, help string, each func(r Row) (labels string, value int, ok bool)) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
		for _, r := range rows {
			if labels, v, ok := each(r); ok {
				fmt.Fprintf(w, "%s{device=\"%s\"%s} %d\n", name, labelValue(r.Disk), labels, v)
			}
		}
	}
	family("iosched_disk_info", "Active I/O scheduler of the disk and the scheduler list udev recorded for it (empty: none).",
		func(r Row) (string, int, bool) {
			wanted := ""
			if r.Wanted != nil {
				wanted = *r.Wanted
			}
			return fmt.Sprintf(",scheduler=\"%s\",wanted=\"%s\"", labelValue(r.Active), labelValue(wanted)), 1, true
		})
	family("iosched_policy_holds", "Whether the disk's queue matches the policy udev recorded (1) or iosched apply would change it (0).",
		func(r Row) (string, int, bool) { return "", boolValue(r.Holds), r.Holds != nil })
	family("iosched_rotational", "Whether the kernel treats the disk as rotational (queue/rotational).",
		func(r Row) (string, int, bool) { return "", boolValue(r.Rotational), r.Rotational != nil })
	family("iosched_hardware_queues", "Number of hardware queues of the disk (entries of /sys/block/DISK/mq).",
		func(r Row) (string, int, bool) {
			ents, err := os.ReadDir(s.Sys.Path("block", r.Disk, "mq"))
			return "", len(ents), err == nil
		})
}

func boolValue(b *bool) int {
	if b != nil && *b {
		return 1
	}
	return 0
}

// labelValue escapes a label value as the exposition format requires:
// UTF-8 (a byte that is not, from a hostile or broken udev database,
// becomes U+FFFD, or the scrape fails whole), with backslash, quote and
// newline escaped.
func labelValue(s string) string {
	return labelEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD"))
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
