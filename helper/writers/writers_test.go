package writers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFind: one fixture root with every kind of writer, the files that
// write nothing beside them.
func TestFind(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"/etc/tmpfiles.d/sched.conf": "# w lines for queue files\n" +
			"w /sys/block/sda/queue/scheduler - - - - mq-deadline\n" +
			"w+ /sys/class/block/nvme0n1/queue/read_ahead_kb - - - - 4096\n" +
			"w /sys/kernel/mm/transparent_hugepage/enabled - - - - never\n" +
			"d /run/foo 0755 root root -\n" +
			"w '/sys/block/sdd/queue/scheduler' - - - - kyber\n",
		// Masked by /etc's link to /dev/null: read as nothing.
		"/usr/lib/tmpfiles.d/masked.conf": "w /sys/block/sdb/queue/scheduler - - - - bfq\n",
		"/usr/lib/tmpfiles.d/other.conf":  "w- /sys/block/sdc/queue/nr_requests - - - - 64\n",
		"/etc/sysfs.conf":                 "# sysfsutils\nblock/sda/queue/scheduler = bfq\nmode block/sda/queue/scheduler = 0644\nkernel/mm/ksm/run = 1\n",
		"/etc/sysfs.d/ra.conf":            "block/sdb/queue/read_ahead_kb=1024\n",
		"/etc/tuned/active_profile":       "my-profile\n",
		"/etc/tuned/my-profile/tuned.conf": "[main]\ninclude=throughput-performance\n[disk]\ndevices=sd*\nelevator=bfq\nreadahead=>4096\n" +
			"[cpu]\ngovernor=performance\n[ssd]\ntype=disk\nelevator=none\n",
		// Included by the active profile, which replaces its [disk] elevator.
		"/usr/lib/tuned/throughput-performance/tuned.conf": "[main]\nsummary=x\n[disk]\nelevator=mq-deadline\n[nvme]\ntype=disk\ndevices=nvme*\nreadahead=8192\n",
		// Installed, not active: tuned applies none of it.
		"/usr/lib/tuned/balanced/tuned.conf": "[disk]\n# comment\nreadahead=4096\n",
		"/usr/lib/tuned/other/tuned.conf":    "[sysctl]\nvm.swappiness=10\n",
		"/etc/tlp.conf":                      "#DISK_IOSCHED=\"bfq\"\nDISK_DEVICES=\"nvme0n1 sda\"\nDISK_IOSCHED=\"bfq\"\n",
		// /etc/tlp.conf overrides it.
		"/etc/tlp.d/10-other.conf": "DISK_IOSCHED=\"kyber kyber\"\n",
		"/etc/udev/rules.d/70-run.rules": "ACTION==\"add|change\", KERNEL==\"sd*\", RUN+=\"/usr/local/bin/tune-disk %k\"\n" +
			"ACTION==\"remove\", RUN+=\"/usr/local/bin/untune\"\n" +
			"ACTION==\"add\", RUN+=\"helper-bin\"\n",
		"/usr/local/bin/tune-disk": "#!/bin/sh\n# echo bfq > /sys/block/$1/queue/scheduler\necho bfq > /sys/block/$1/queue/scheduler\n" +
			"echo 0 | tee /sys/block/$1/queue/add_random\ncat /sys/block/$1/queue/rotational\n",
		"/usr/local/bin/untune":    "#!/bin/sh\necho none > /sys/block/$1/queue/scheduler\n",
		"/usr/lib/udev/helper-bin": "\x7fELF\x00 queue/scheduler >",
	}
	for p, data := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/dev/null", filepath.Join(root, "/etc/tmpfiles.d/masked.conf")); err != nil {
		t.Fatal(err)
	}
	got, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Writer{
		{Kind: Sysfsutils, File: "/etc/sysfs.conf", Line: 2, Disk: "sda", Attr: "scheduler", Value: "bfq"},
		{Kind: Sysfsutils, File: "/etc/sysfs.d/ra.conf", Line: 1, Disk: "sdb", Attr: "read_ahead_kb", Value: "1024"},
		// One entry: the first of DISK_DEVICES only.
		{Kind: TLP, File: "/etc/tlp.conf", Line: 3, Disk: "nvme0n1", Attr: "scheduler", Value: "bfq"},
		{Kind: Tmpfiles, File: "/etc/tmpfiles.d/sched.conf", Line: 2, Disk: "sda", Attr: "scheduler", Value: "mq-deadline"},
		{Kind: Tmpfiles, File: "/etc/tmpfiles.d/sched.conf", Line: 3, Disk: "nvme0n1", Attr: "read_ahead_kb", Value: "4096"},
		{Kind: Tmpfiles, File: "/etc/tmpfiles.d/sched.conf", Line: 6, Disk: "sdd", Attr: "scheduler", Value: "kyber"},
		{Kind: Tuned, File: "/etc/tuned/my-profile/tuned.conf", Line: 5, Disk: "sd*", Attr: "scheduler", Value: "bfq", Note: "the active profile, my-profile"},
		{Kind: Tuned, File: "/etc/tuned/my-profile/tuned.conf", Line: 6, Disk: "sd*", Attr: "read_ahead_kb", Value: ">4096", Note: "the active profile, my-profile",
			Conditional: "only when the current value is lower (tuned compares first)"},
		{Kind: Tuned, File: "/etc/tuned/my-profile/tuned.conf", Line: 11, Attr: "scheduler", Value: "none", Note: "the active profile, my-profile"},
		{Kind: Tmpfiles, File: "/usr/lib/tmpfiles.d/other.conf", Line: 1, Disk: "sdc", Attr: "nr_requests", Value: "64"},
		{Kind: Tuned, File: "/usr/lib/tuned/throughput-performance/tuned.conf", Line: 8, Disk: "nvme*", Attr: "read_ahead_kb", Value: "8192",
			Note: "profile throughput-performance, included by my-profile", Included: true},
		{Kind: RunProgram, File: "/usr/local/bin/tune-disk", Line: 3, Attr: "scheduler", Note: "run by /etc/udev/rules.d/70-run.rules:1"},
		{Kind: RunProgram, File: "/usr/local/bin/tune-disk", Line: 4, Attr: "add_random", Note: "run by /etc/udev/rules.d/70-run.rules:1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Find (-want +got):\n%s", diff)
	}
	wantText := "/etc/tlp.conf:3: TLP writes queue/scheduler=\"bfq\" on nvme0n1 at boot, without comparing first\n" +
		"    set DISK_IOSCHED to keep for these disks and ENV{IOSCHED_SCHEDULER} in a udev rule: TLP writes it on every start and power-source change"
	if diff := cmp.Diff(wantText, got[2].String()); diff != "" {
		t.Errorf("Writer.String (-want +got):\n%s", diff)
	}
	// An empty root has none.
	if got, err := Find(t.TempDir()); err != nil || len(got) != 0 {
		t.Errorf("Find(empty root) = %v, %v", got, err)
	}
}

func TestConfiguredFor(t *testing.T) {
	tests := []struct {
		disks, disk string
		want        bool
	}{
		{"", "sda", true},
		{"sda", "sda", true},
		{"sda", "sdb", false},
		{"sd*", "sdb", true},
		{"sda, sdb", "sdb", true},
		{"nvme0n1 sda", "sda", true},
		{"!sda", "sdb", true},
		{"!sda", "sda", false},
		{"sd*,!sdc", "sdc", false},
		{"sd*,!sdc", "sdd", true},
	}
	for _, tt := range tests {
		if got := (Writer{Disk: tt.disks}).ConfiguredFor(tt.disk); got != tt.want {
			t.Errorf("ConfiguredFor(%q, %q) = %v, want %v", tt.disks, tt.disk, got, tt.want)
		}
	}
}
