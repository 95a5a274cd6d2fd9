package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/iosched/iosched/helper/status"
)

// writePrometheus prints the status rows in the Prometheus text
// exposition format, for node_exporter's textfile collector. The disk is
// the "device" label, as in node_exporter's own node_disk_* series, so
// the two join. Strings go into labels of an _info gauge; a series whose
// value is unknown is left out rather than guessed.
func (e env) writePrometheus(w io.Writer, rows []status.Row) {
	family := func(name, help string, each func(r status.Row) (labels string, value int, ok bool)) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
		for _, r := range rows {
			if labels, v, ok := each(r); ok {
				fmt.Fprintf(w, "%s{device=\"%s\"%s} %d\n", name, labelValue(r.Disk), labels, v)
			}
		}
	}
	family("iosched_disk_info", "Active I/O scheduler of the disk and the scheduler list udev recorded for it (empty: none).",
		func(r status.Row) (string, int, bool) {
			wanted := ""
			if r.Wanted != nil {
				wanted = *r.Wanted
			}
			return fmt.Sprintf(",scheduler=\"%s\",wanted=\"%s\"", labelValue(r.Active), labelValue(wanted)), 1, true
		})
	family("iosched_policy_holds", "Whether the disk's queue matches the policy udev recorded (1) or iosched apply would change it (0).",
		func(r status.Row) (string, int, bool) { return "", boolValue(r.Holds), r.Holds != nil })
	family("iosched_rotational", "Whether the kernel treats the disk as rotational (queue/rotational).",
		func(r status.Row) (string, int, bool) { return "", boolValue(r.Rotational), r.Rotational != nil })
	family("iosched_hardware_queues", "Number of hardware queues of the disk (entries of /sys/block/DISK/mq).",
		func(r status.Row) (string, int, bool) {
			ents, err := os.ReadDir(e.sys.Path("block", r.Disk, "mq"))
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
