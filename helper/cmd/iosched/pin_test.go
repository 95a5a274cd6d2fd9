package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/internal/fixture"
	"github.com/iosched/iosched/helper/pin"
)

// TestPin: pin writes one line by the disk's identity, refuses a disk
// with none and bad input with nothing written, and unpin puts the
// rules directory back as it was.
func TestPin(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	db := map[string]string{
		"sda/ID_WWN":        "0x5000c500a1b2c3d4",
		"sda/ID_SERIAL":     "ST1000_Z1",
		"nvme0n1/ID_SERIAL": "Samsung_SSD_S4EW",
	}
	root := t.TempDir()
	rules := filepath.Join(root, "etc/udev/rules.d")
	if err := os.MkdirAll(rules, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(rules, pin.FileName)
	runPin := func(args ...string) result {
		var out, errb bytes.Buffer
		e := testEnv(t, sys, nil, db)
		e.stdout, e.stderr, e.root = &out, &errb, root
		return result{Code: run(e, args), Stdout: out.String(), Stderr: errb.String()}
	}
	read := func() string {
		b, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			return "(absent)"
		}
		return string(b)
	}
	tests := []struct {
		args []string
		want result
		file string // what the file holds after
	}{
		{[]string{"pin", "loop0", "none"}, result{Code: 1, Stderr: "iosched: loop0: udev gives the disk no stable identity (ID_WWN, ID_SERIAL, ID_PATH): nothing pinned (a rule by kernel name, or iosched.scheduler=loop0:LIST, is what remains)\n"}, "(absent)"},
		{[]string{"pin", "sda", "Bfq"}, result{Code: 2}, "(absent)"},
		{[]string{"pin", "sda", "bfq,mq-deadline", "read_ahead_kb=256"},
			result{Stdout: "sda: pinned by ID_WWN=0x5000c500a1b2c3d4: bfq,mq-deadline read_ahead_kb=256 (" + file + "; from the disk's next event)\n"},
			"# Written by `iosched pin`; `iosched unpin DISK` removes a disk's line.\n# Each line matches one disk by the identity udev gives it.\n" +
				`ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ENV{ID_WWN}=="0x5000c500a1b2c3d4", ENV{IOSCHED_PIN}="ID_WWN=0x5000c500a1b2c3d4", ENV{IOSCHED_SCHEDULER}="bfq,mq-deadline", ENV{IOSCHED_PIN_SCHEDULER}="bfq,mq-deadline", ENV{IOSCHED_ATTR_read_ahead_kb}="256"` + "\n"},
		{[]string{"pin", "nvme0n1", "iosched/read_lat_nsec=1000000"},
			result{Stdout: "nvme0n1: pinned by ID_SERIAL=Samsung_SSD_S4EW: iosched/read_lat_nsec=1000000 (" + file + "; from the disk's next event)\n"}, ""},
		{[]string{"unpin", "nvme0n1"}, result{Stdout: "nvme0n1: unpinned ID_SERIAL=Samsung_SSD_S4EW (" + file + "; from the disk's next event)\n"}, ""},
		{[]string{"unpin", "nvme0n1"}, result{Code: 1, Stderr: "iosched: nvme0n1: no pin for ID_SERIAL=Samsung_SSD_S4EW in " + file + "\n"}, ""},
		{[]string{"unpin", "sda"}, result{Stdout: "sda: unpinned ID_WWN=0x5000c500a1b2c3d4 (" + file + "; from the disk's next event)\n"}, "(absent)"},
	}
	var afterSda string
	for i, tt := range tests {
		got := runPin(tt.args...)
		if tt.want.Code == 2 {
			got.Stderr = "" // the usage text; the code is the contract
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("iosched %q (-want +got):\n%s", tt.args, diff)
		}
		if i == 2 {
			afterSda = read()
		}
		want := tt.file
		if want == "" && i >= 4 {
			want = afterSda // unpinning nvme0n1 leaves sda's file byte for byte
		}
		if want != "" {
			if diff := cmp.Diff(want, read()); diff != "" {
				t.Errorf("after %q the file (-want +got):\n%s", tt.args, diff)
			}
		}
	}
	if ents, _ := os.ReadDir(rules); len(ents) != 0 {
		t.Errorf("after the last unpin %s holds %v", rules, ents)
	}
}
