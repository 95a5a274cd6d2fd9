package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/iosched/iosched/helper/internal/fixture"
)

// FuzzUdev runs the udev entry point with random event properties
// against a fixture tree: it never panics, exits 0, 1 or 2, creates no
// file, and changes no file but a disk's queue attributes.
func FuzzUdev(f *testing.F) {
	const sda = "/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda"
	f.Add("change", "/devices/virtual/block/loop0", "disk", "none", "ATTR_read_ahead_kb", "256")
	f.Add("add", sda, "disk", "bfq,mq-deadline", "TUNE_read_expire", "250")
	f.Add("add", sda+"/sda1", "partition", "kyber", "ATTR_rotational", "0")
	f.Add("change", "/devices/virtual/block/zram0", "disk", "none", "", "")
	f.Add("change", "/devices/../block/loop0", "disk", "kyber;rm", "ATTR_../../dev", "1")
	f.Add("change", "/devices/virtual/block/loop0", "disk", "bfq", "CMDLINE", "sda:kyber/loop0:none,keep")
	// What the udev entry point may ever change: a file in a whole
	// disk's queue/ directory.
	var queues []string
	for _, d := range fixture.Standard() {
		queues = append(queues, filepath.Join("devices", d.Parent, d.Name, "queue")+"/")
	}
	// One tree for every input, put back after each: a fresh tree per
	// input would cost more than the run.
	sys := fixture.New(f, fixture.Standard()...)
	before := snapshot(f, sys)
	f.Fuzz(func(t *testing.T, action, devpath, devtype, list, prop, value string) {
		ev := map[string]string{"ACTION": action, "SUBSYSTEM": "block", "DEVPATH": devpath,
			"DEVTYPE": devtype, "IOSCHED_SCHEDULER": list}
		if prop != "" {
			ev["IOSCHED_"+prop] = value
		}
		e := testEnv(t, sys, ev, nil)
		code := run(e, []string{"udev"})
		if code != exitOK && code != exitFailure && code != exitUsage {
			t.Errorf("exit %d for %q", code, ev)
		}
		after := snapshot(t, sys)
		for p := range after {
			if _, ok := before[p]; !ok {
				t.Errorf("created %s for %q", p, ev)
				os.Remove(p)
			}
		}
		for _, p := range changedFiles(before, after) {
			rel, err := filepath.Rel(string(sys), p)
			if err != nil || !slices.ContainsFunc(queues, func(q string) bool { return strings.HasPrefix(rel, q) }) {
				t.Errorf("changed %s, not a queue attribute, for %q", p, ev)
			}
		}
		for p, v := range before {
			if after[p] != v {
				if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
