package writers

import (
	"strings"
	"testing"
)

// FuzzTuned: any tuned.conf text is read without a panic, every writer
// points at a line of the text that names its option, and a queue path
// splits only into a disk and an attribute without a slash in the disk.
func FuzzTuned(f *testing.F) {
	for _, s := range []string{
		"[disk]\ndevices=sd*\nelevator=bfq\nreadahead=>4096\n",
		"[ssd]\ntype=disk\nelevator=none\n[cpu]\nelevator=x\n",
		"[disk]\n# elevator=bfq\n  readahead = 128  \n",
	} {
		f.Add(s, "/sys/block/sda/queue/scheduler")
	}
	f.Fuzz(func(t *testing.T, conf, path string) {
		lines := strings.Split(conf, "\n")
		for _, tw := range tunedWriters("tuned.conf", lines, "p") {
			w := tw.w
			if w.Line < 1 || w.Line > len(lines) {
				t.Fatalf("writer at line %d of %d", w.Line, len(lines))
			}
			if l := lines[w.Line-1]; !strings.Contains(l, "elevator") && !strings.Contains(l, "readahead") {
				t.Fatalf("writer at line %d, which is %q", w.Line, l)
			}
		}
		if disk, attr, ok := queuePath(path); ok && (disk == "" || strings.Contains(disk, "/") || attr == "") {
			t.Fatalf("queuePath(%q) = %q, %q", path, disk, attr)
		}
	})
}
