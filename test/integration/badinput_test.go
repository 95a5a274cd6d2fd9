package integration

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBadInput: malformed names exit 2, names of no block device exit 1,
// and so do bad udev properties (udev mode applies the rest);
// the message names what was wrong; and nothing at all is opened for
// writing (NUL cannot be tested: argv and the environment cannot hold it).
func TestBadInput(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	force(t, d, "none")
	long31 := strings.Repeat("a", 31)
	long32 := strings.Repeat("a", 32)
	cases := []struct {
		name    string
		env     []string
		args    []string // after the binary
		code    int
		message string // must appear in the first line of stderr
	}{
		// Device names.
		{"slash in kernel name", nil, []string{"set", d.Name + "/queue", "kyber"}, 2, `"` + d.Name + `/queue"`},
		{"dot dot", nil, []string{"set", "..", "kyber"}, 2, `".."`},
		{"dot", nil, []string{"set", ".", "kyber"}, 2, `"."`},
		{"dot dot in /dev path", nil, []string{"set", "/dev/../dev/" + d.Name, "kyber"}, 2, `"/dev/../dev/` + d.Name + `"`},
		{"dot dot in /sys path", nil, []string{"set", "/sys/block/" + d.Name + "/../" + d.Name, "kyber"}, 2, `".."`},
		{"newline in name", nil, []string{"set", d.Name + "\n", "kyber"}, 2, `"` + d.Name + `\n"`},
		{"newline in /dev path", nil, []string{"set", "/dev/" + d.Name + "\nx", "kyber"}, 2, `\n`},
		{"empty device", nil, []string{"set", "", "kyber"}, 2, "empty"},
		{"name over 31 bytes", nil, []string{"set", long32, "kyber"}, 2, long32},
		{"31 bytes, no such disk", nil, []string{"set", long31, "kyber"}, 1, long31},
		{"no such kernel name", nil, []string{"set", "nosuchdisk9", "kyber"}, 1, "nosuchdisk9"},
		{"no such /dev path", nil, []string{"set", "/dev/nosuchdisk9", "kyber"}, 1, "/dev/nosuchdisk9"},
		{"character device", nil, []string{"set", "/dev/null", "kyber"}, 1, "/dev/null"},
		{"regular file", nil, []string{"set", "/etc/hostname", "kyber"}, 1, "/etc/hostname"},
		{"sysfs dir that is not a disk", nil, []string{"set", "/sys/kernel", "kyber"}, 1, "/sys/kernel"},
		{"queue dir of the disk", nil, []string{"set", "/sys/block/" + d.Name + "/queue", "kyber"}, 1, "/sys/block/" + d.Name + "/queue"},
		{"relative path", nil, []string{"set", "dev/" + d.Name, "kyber"}, 2, `"dev/` + d.Name + `"`},
		// Scheduler names, on a real disk.
		{"empty scheduler", nil, []string{"set", d.Dev, ""}, 2, `""`},
		{"empty list element", nil, []string{"set", d.Dev, "kyber,"}, 2, `"kyber,"`},
		{"scheduler 16 bytes", nil, []string{"set", d.Dev, "mq-deadline-xxxx"}, 2, "mq-deadline-xxxx"},
		{"scheduler 40 bytes", nil, []string{"set", d.Dev, strings.Repeat("k", 40)}, 2, strings.Repeat("k", 40)},
		{"space inside", nil, []string{"set", d.Dev, "mq deadline"}, 2, `"mq deadline"`},
		{"uppercase", nil, []string{"set", d.Dev, "Kyber"}, 2, `"Kyber"`},
		{"newline inside", nil, []string{"set", d.Dev, "bfq\nkyber"}, 2, `"bfq\nkyber"`},
		{"shell metacharacters", nil, []string{"set", d.Dev, "none;reboot"}, 2, `"none;reboot"`},
		{"path as scheduler", nil, []string{"set", d.Dev, "../../kyber"}, 2, `"../../kyber"`},
		// Well-formed but unknown: no module can provide it, so it must not
		// be written (a write would allocate and freeze before EINVAL).
		{"unknown scheduler", nil, []string{"set", d.Dev, "abcdefghijklmno"}, 1, "abcdefghijklmno"},
		// Queue attributes: only known names, only values the kernel takes.
		{"unknown attribute", nil, []string{"set", d.Dev, "foo=1"}, 2, `"foo"`},
		{"scheduler as attribute", nil, []string{"set", d.Dev, "none", "scheduler=kyber"}, 2, `"scheduler"`},
		{"attribute path escape", nil, []string{"set", d.Dev, "iosched/../scheduler=kyber"}, 2, `"iosched/../scheduler"`},
		{"attribute outside queue", nil, []string{"set", d.Dev, "../ro=1"}, 2, `"../ro"`},
		{"attribute bad number", nil, []string{"set", d.Dev, "read_ahead_kb=abc"}, 2, `"abc"`},
		{"attribute empty value", nil, []string{"set", d.Dev, "read_ahead_kb="}, 2, "read_ahead_kb"},
		{"attribute value with newline", nil, []string{"set", d.Dev, "read_ahead_kb=1\n2"}, 2, "read_ahead_kb"},
		{"attribute over UINT_MAX", nil, []string{"set", d.Dev, "nomerges=99999999999999999999"}, 2, "99999999999999999999"},
		{"udev unknown attribute", append(udevEnv("change", "disk", d.Devpath, ""), "IOSCHED_ATTR_foo=1"), []string{"udev"}, 1, "IOSCHED_ATTR_foo"},
		{"udev bad attribute value", append(udevEnv("change", "disk", d.Devpath, ""), "IOSCHED_ATTR_read_ahead_kb=-1"), []string{"udev"}, 1, "IOSCHED_ATTR_read_ahead_kb"},
		// Usage.
		{"no command", nil, nil, 2, "usage"},
		{"unknown command", nil, []string{"frobnicate"}, 2, `"frobnicate"`},
		{"set without scheduler", nil, []string{"set", d.Dev}, 2, "set takes"},
		{"set with extra argument", nil, []string{"set", d.Dev, "kyber", "bfq"}, 2, `"bfq"`},
		{"unknown flag", nil, []string{"set", "--bogus", d.Dev, "kyber"}, 2, "bogus"},
		{"status with argument", nil, []string{"status", d.Name}, 2, "status takes no arguments"},
		// The udev entry point.
		{"udev uppercase policy", udevEnv("change", "disk", d.Devpath, "Kyber"), []string{"udev"}, 1, `"Kyber"`},
		{"udev over-long policy", udevEnv("change", "disk", d.Devpath, "mq-deadline-xxxx"), []string{"udev"}, 1, "mq-deadline-xxxx"},
		{"udev DEVPATH with dot dot", udevEnv("change", "disk", "/devices/../block/"+d.Name, "kyber"), []string{"udev"}, 2, `".."`},
		{"udev DEVPATH outside /devices", udevEnv("change", "disk", "/block/"+d.Name, "kyber"), []string{"udev"}, 2, "/block/" + d.Name},
		{"udev DEVPATH with newline", udevEnv("change", "disk", d.Devpath+"\n", "kyber"), []string{"udev"}, 2, `\n`},
		{"udev DEVPATH that is no disk", udevEnv("change", "disk", "/devices/virtual/net/lo", "kyber"), []string{"udev"}, 1, "lo is not a disk"},
		{"udev without DEVPATH", []string{"ACTION=change", "SUBSYSTEM=block", "DEVTYPE=disk", "IOSCHED_SCHEDULER=kyber"}, []string{"udev"}, 2, "DEVPATH"},
		{"udev with arguments", nil, []string{"udev", d.Name}, 2, "udev takes no arguments"},
	}
	for _, tc := range cases {
		for binName, bin := range map[string]string{"cgo": b.Cgo, "static": b.Static} {
			t.Run(tc.name+"/"+binName, func(t *testing.T) {
				o := run(t, true, tc.env, append([]string{bin}, tc.args...)...)
				first, _, _ := strings.Cut(o.Stderr, "\n")
				type res struct {
					Code       int
					Stdout     string
					HasMessage bool
				}
				want := res{tc.code, "", true}
				got := res{o.Code, o.Stdout, strings.Contains(first, tc.message)}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("iosched %q (-want +got):\n%s\nfirst line of stderr %q should contain %q", tc.args, diff, first, tc.message)
				}
				checkNoWrite(t, o)
			})
		}
	}
	if got := active(t, d); got != "none" {
		t.Errorf("after the bad inputs %s reads %s, want none", d.Sched, got)
	}
}

// TestUdevGoneDevice: an event for a disk removed before the helper ran is
// nothing to do: exit 0, nothing opened for writing.
func TestUdevGoneDevice(t *testing.T) {
	b := setup(t)
	for binName, bin := range map[string]string{"cgo": b.Cgo, "static": b.Static} {
		t.Run(binName, func(t *testing.T) {
			devpath := "/devices/virtual/block/nosuchdisk9"
			o := run(t, true, udevEnv("add", "disk", devpath, "kyber"), bin, "udev")
			if diff := cmp.Diff(got{0, devpath + ": went away, nothing done\n"}, o.got()); diff != "" {
				t.Errorf("iosched udev for %s (-want +got):\n%s\nstderr: %s", devpath, diff, o.Stderr)
			}
			checkNoWrite(t, o)
		})
	}
}
