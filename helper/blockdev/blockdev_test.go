package blockdev

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/internal/fixture"
)

// fakeDev maps /dev paths to device numbers, as stat(2) would.
func fakeDev(path string) (uint32, uint32, error) {
	m := map[string][2]uint32{
		"/dev/sda": {8, 0}, "/dev/sda1": {8, 1}, "/dev/nvme0n1p1": {259, 1},
		"/dev/disk/by-id/ata-X": {8, 0}, "/dev/loop0": {7, 0}, "/dev/sdz": {8, 240},
	}
	n, ok := m[path]
	if !ok {
		return 0, 0, fmt.Errorf("%w %q", ErrNotFound, path)
	}
	return n[0], n[1], nil
}

func TestResolve(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	r := Resolver{Sys: sys, DevNum: fakeDev}
	tests := []struct {
		arg  string
		want Device
		err  error
	}{
		{arg: "sda", want: Device{Name: "sda", Disk: "sda"}},
		{arg: "sda1", want: Device{Name: "sda1", Disk: "sda"}},
		{arg: "nvme0n1p1", want: Device{Name: "nvme0n1p1", Disk: "nvme0n1"}},
		{arg: "loop0", want: Device{Name: "loop0", Disk: "loop0"}},
		{arg: "/dev/sda", want: Device{Name: "sda", Disk: "sda"}},
		{arg: "/dev/sda1", want: Device{Name: "sda1", Disk: "sda"}},
		{arg: "/dev/disk/by-id/ata-X", want: Device{Name: "sda", Disk: "sda"}},
		{arg: string(sys) + "/block/sda", want: Device{Name: "sda", Disk: "sda"}},
		{arg: string(sys) + "/class/block/sda2", want: Device{Name: "sda2", Disk: "sda"}},
		{arg: string(sys) + "/devices/virtual/block/loop0", want: Device{Name: "loop0", Disk: "loop0"}},
		{arg: "sdb", err: ErrNotFound},
		{arg: "/dev/sdz", err: ErrNotFound},  // device number with no sysfs entry
		{arg: "/dev/null", err: ErrNotFound}, // not in the fake: stat finds no block device
		{arg: "lo", err: ErrNotFound},        // a network device
		{arg: string(sys) + "/class/net/lo", err: ErrNotDisk},
		{arg: string(sys) + "/devices/virtual", err: ErrNotDisk},
		{arg: string(sys) + "/block/sda/queue", err: ErrNotDisk},
		{arg: "", err: ErrBadName},
		{arg: ".", err: ErrBadName},
		{arg: "..", err: ErrBadName},
		{arg: "block/sda", err: ErrBadName},
		{arg: "../sda", err: ErrBadName},
		{arg: "/dev/../sys/block/sda", err: ErrBadName},
		{arg: string(sys) + "/block/../block/sda", err: ErrBadName},
		{arg: "sda\n", err: ErrBadName},
		{arg: "sd\x00a", err: ErrBadName},
		{arg: strings.Repeat("a", 32), err: ErrBadName},
		{arg: "/" + strings.Repeat("a", PathMax), err: ErrBadName},
	}
	for _, tt := range tests {
		got, err := r.Resolve(tt.arg)
		if !errors.Is(err, tt.err) {
			t.Errorf("Resolve(%q) error = %v, want %v", tt.arg, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Resolve(%q) mismatch (-want +got):\n%s", tt.arg, diff)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.arg)) && tt.arg != "" && len(tt.arg) < 100 {
			t.Errorf("Resolve(%q) error %q does not name the argument", tt.arg, err)
		}
	}
}

func TestFromDevpath(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	r := Resolver{Sys: sys}
	tests := []struct {
		devpath string
		want    Device
		err     error
	}{
		{devpath: "/devices/virtual/block/loop0", want: Device{Name: "loop0", Disk: "loop0"}},
		{devpath: "/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda1", want: Device{Name: "sda1", Disk: "sda"}},
		{devpath: "/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda", want: Device{Name: "sda", Disk: "sda"}},
		// The disk's name under another parent: /sys/block/sda points elsewhere.
		{devpath: "/devices/virtual/block/sda", err: ErrNotFound},
		{devpath: "/devices/virtual/block/loop9", err: ErrNotFound},
		{devpath: "/devices/virtual/net/lo", err: ErrNotDisk},
		{devpath: "/devices/virtual/block/../block/loop0", err: ErrBadName},
		{devpath: "/block/loop0", err: ErrBadName},
		{devpath: "devices/virtual/block/loop0", err: ErrBadName},
	}
	for _, tt := range tests {
		got, err := r.FromDevpath(tt.devpath)
		if !errors.Is(err, tt.err) {
			t.Errorf("FromDevpath(%q) error = %v, want %v", tt.devpath, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("FromDevpath(%q) mismatch (-want +got):\n%s", tt.devpath, diff)
		}
	}
}

// FuzzResolve checks that no argument resolves to anything but a disk
// the fixture has, and that nothing panics.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"sda", "sda1", "/dev/sda", "../x", "/sys/block/sda", ".", "nvme0n1p1", "lo"} {
		f.Add(s)
	}
	sys := fixture.New(f, fixture.Standard()...)
	disks := map[string]bool{"sda": true, "nvme0n1": true, "loop0": true, "zram0": true}
	r := Resolver{Sys: sys, DevNum: fakeDev}
	f.Fuzz(func(t *testing.T, arg string) {
		for _, a := range []string{arg, string(sys) + "/" + arg} {
			d, err := r.Resolve(a)
			if err != nil {
				if !errors.Is(err, ErrBadName) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrNotDisk) {
					t.Fatalf("Resolve(%q): unexpected error kind %v", a, err)
				}
				continue
			}
			if !disks[d.Disk] {
				t.Fatalf("Resolve(%q) = %+v: not a disk of the fixture", a, d)
			}
		}
	})
}

// TestDisks: each argument to its whole disk, each disk once in the
// order first named; a bad argument fails the whole list.
func TestDisks(t *testing.T) {
	r := Resolver{Sys: fixture.New(t, fixture.Standard()...), DevNum: fakeDev}
	got, err := r.Disks([]string{"sda1", "loop0", "/dev/sda", "nvme0n1p1", "sda"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"sda", "loop0", "nvme0n1"}, got); diff != "" {
		t.Errorf("Disks (-want +got):\n%s", diff)
	}
	if got, err := r.Disks([]string{"sda", "../sda"}); !errors.Is(err, ErrBadName) || got != nil {
		t.Errorf("Disks with a bad name = %q, %v; want nil, ErrBadName", got, err)
	}
}
