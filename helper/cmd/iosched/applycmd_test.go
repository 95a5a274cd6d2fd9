package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/internal/fixture"
	"github.com/iosched/iosched/helper/udevdb"
)

const sdaQueue = "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/queue/"

func TestApply(t *testing.T) {
	holds := map[string]string{
		"sda/IOSCHED_SCHEDULER":         "mq-deadline",
		"sda/IOSCHED_ATTR_wbt_lat_usec": "75000",
		"nvme0n1/IOSCHED_SCHEDULER":     "none",
	}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range holds {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name  string
		db    map[string]string
		args  []string
		want  result
		wrote []string // files changed, under sdaQueue
	}{
		{"all hold", holds, []string{"apply"}, result{Stdout: "nvme0n1: none already active\nsda: mq-deadline already active\nsda: wbt_lat_usec 75000 already set\n"}, nil},
		{"attribute drifted", with("sda/IOSCHED_ATTR_wbt_lat_usec", "100000"), []string{"apply"},
			result{Stdout: "nvme0n1: none already active\nsda: mq-deadline already active\nsda: wbt_lat_usec 75000 -> 100000\n"}, []string{"wbt_lat_usec"}},
		{"dry run", with("sda/IOSCHED_ATTR_wbt_lat_usec", "0", "sda/IOSCHED_TUNE_read_expire", "240"), []string{"apply", "--dry-run"},
			result{Stdout: "nvme0n1: none already active\nsda: mq-deadline already active\nsda: wbt_lat_usec 75000 -> 0 (dry run)\nsda: iosched/read_expire 500 -> 240 (dry run)\n"}, nil},
		{"named, partition means disk", with("sda/IOSCHED_ATTR_read_ahead_kb", "256"), []string{"apply", "sda1", "sda"},
			result{Stdout: "sda: mq-deadline already active\nsda: wbt_lat_usec 75000 already set\nsda: read_ahead_kb 128 -> 256\n"}, []string{"read_ahead_kb"}},
		{"named without policy", holds, []string{"apply", "loop0"}, result{Stdout: "loop0: no policy recorded by udev, nothing to do\n"}, nil},
		{"opted out", with("nvme0n1/IOSCHED_SCHEDULER", ""), []string{"apply", "nvme0n1"}, result{Stdout: "nvme0n1: no policy recorded by udev, nothing to do\n"}, nil},
		{"no scheduler file", with("zram0/IOSCHED_SCHEDULER", "none"), []string{"apply", "zram0"}, result{Stdout: "zram0: no I/O scheduler, nothing to do\n"}, nil},
		{"bad name", holds, []string{"apply", "sda", "../sda"}, result{Code: 2, Stderr: `iosched: bad device name "../sda": give a kernel name, a /dev path or a /sys path`}, nil},
		{"bad recorded value: others still applied", with("nvme0n1/IOSCHED_ATTR_wbt_lat_usec", "soon", "sda/IOSCHED_ATTR_wbt_lat_usec", "100000"), []string{"apply"},
			result{Code: 1, Stdout: "nvme0n1: none already active\nsda: mq-deadline already active\nsda: wbt_lat_usec 75000 -> 100000\n",
				Stderr: "iosched: nvme0n1: IOSCHED_ATTR_wbt_lat_usec: wbt_lat_usec=\"soon\": bad value: the kernel refuses it (blk-sysfs.c:queue_wb_lat_store: kstrtos64, microseconds, 0 to disable or -1 for the default)"}, []string{"wbt_lat_usec"}},
		{"unusable scheduler", with("nvme0n1/IOSCHED_SCHEDULER", "nosuch"), []string{"apply", "nvme0n1"},
			result{Code: 1, Stderr: "iosched: nvme0n1: none of nosuch can be used (offers none mq-deadline kyber bfq): no wanted scheduler is available"}, nil},
		{"unknown flag", holds, []string{"apply", "--force"}, result{Code: 2, Stderr: "iosched: flag provided but not defined: -force"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := fixture.New(t, fixture.Standard()...)
			before := snapshot(t, sys)
			got, _ := runIn(t, sys, nil, tt.db, tt.args...)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("iosched %q (-want +got):\n%s", tt.args, diff)
			}
			var want []string
			for _, f := range tt.wrote {
				want = append(want, filepath.Join(string(sys), sdaQueue, f))
			}
			if diff := cmp.Diff(want, changedFiles(before, snapshot(t, sys))); diff != "" {
				t.Errorf("iosched %q changed files (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// TestApplyConverges runs apply twice: the second run finds everything
// in place and writes nothing.
func TestApplyConverges(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	// Values no shorter than the fixture's: a fixture file is not truncated on write.
	db := map[string]string{"sda/IOSCHED_ATTR_wbt_lat_usec": "100000", "sda/IOSCHED_ATTR_read_ahead_kb": "512"}
	if got, changed := runIn(t, sys, nil, db, "apply"); got.Code != 0 || !changed {
		t.Fatalf("first apply: %+v, changed %v; want exit 0 and a change", got, changed)
	}
	got, changed := runIn(t, sys, nil, db, "apply")
	want := result{Stdout: "sda: wbt_lat_usec 100000 already set\nsda: read_ahead_kb 512 already set\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("second apply (-want +got):\n%s", diff)
	}
	if changed {
		t.Error("second apply changed the tree")
	}
}

// TestApplyWithoutUdevDB: the static build cannot read the database, so
// apply fails as a whole before touching anything.
func TestApplyWithoutUdevDB(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	for _, args := range [][]string{{"apply"}, {"status", "--check"}} {
		var errb bytes.Buffer
		e := testEnv(t, sys, nil, nil)
		e.stderr = &errb
		e.udev = func(string) (map[string]string, error) { return nil, udevdb.ErrUnavailable }
		code := run(e, args)
		first, _, _ := strings.Cut(errb.String(), "\n")
		wantErr := "iosched: " + args[0] + ": " + udevdb.ErrUnavailable.Error()
		if args[0] == "status" {
			wantErr = "iosched: status --check: " + udevdb.ErrUnavailable.Error()
		}
		if diff := cmp.Diff(result{Code: 1, Stderr: wantErr}, result{Code: code, Stderr: first}); diff != "" {
			t.Errorf("iosched %q (-want +got):\n%s", args, diff)
		}
	}
}

func TestStatusCheck(t *testing.T) {
	tests := []struct {
		name       string
		db         map[string]string
		wantCode   int
		wantStderr string
	}{
		{"all hold", map[string]string{"sda/IOSCHED_SCHEDULER": "mq-deadline", "nvme0n1/IOSCHED_SCHEDULER": "none,mq-deadline"}, 0, ""},
		{"no policy at all", nil, 0, ""},
		{"scheduler and attribute drifted",
			map[string]string{"sda/IOSCHED_SCHEDULER": "bfq", "sda/IOSCHED_ATTR_wbt_lat_usec": "0", "nvme0n1/IOSCHED_SCHEDULER": "none"}, 1,
			"iosched: sda: policy does not hold: mq-deadline -> bfq, wbt_lat_usec ? -> 0 after the switch\n"},
		{"attribute only",
			map[string]string{"loop0/IOSCHED_ATTR_read_ahead_kb": "4096"}, 1,
			"iosched: loop0: policy does not hold: read_ahead_kb 128 -> 4096\n"},
		{"two disks, one line each",
			map[string]string{"sda/IOSCHED_SCHEDULER": "kyber", "nvme0n1/IOSCHED_SCHEDULER": "nosuch"}, 1,
			"iosched: nvme0n1: policy does not hold: nvme0n1: none of nosuch can be used (offers none mq-deadline kyber bfq): no wanted scheduler is available\n" +
				"iosched: sda: policy does not hold: mq-deadline -> kyber\n"},
		{"bad recorded value",
			map[string]string{"sda/IOSCHED_ATTR_nomerges": "x"}, 1,
			"iosched: sda: policy does not hold: sda: IOSCHED_ATTR_nomerges: nomerges=\"x\": bad value: the kernel refuses it (blk-sysfs.c:queue_var_store: kstrtoul, a decimal number up to 4294967295)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := fixture.New(t, fixture.Standard()...)
			var out, errb bytes.Buffer
			e := testEnv(t, sys, nil, tt.db)
			e.stdout, e.stderr = &out, &errb
			code := run(e, []string{"status", "--check"})
			if diff := cmp.Diff(result{Code: tt.wantCode, Stderr: tt.wantStderr}, result{Code: code, Stderr: errb.String()}); diff != "" {
				t.Errorf("status --check (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(out.String(), "DISK ") {
				t.Errorf("status --check printed no table:\n%s", out.String())
			}
		})
	}
}

func TestStatusFormatFlags(t *testing.T) {
	sys := fixture.New(t, fixture.Standard()...)
	json, _ := runIn(t, sys, nil, nil, "status", "--json")
	format, _ := runIn(t, sys, nil, nil, "status", "--format=json")
	if json.Code != 0 || !strings.HasPrefix(json.Stdout, "[") {
		t.Fatalf("status --json: %+v", json)
	}
	if diff := cmp.Diff(json, format); diff != "" {
		t.Errorf("--json and --format=json differ (-json +format):\n%s", diff)
	}
	for _, args := range [][]string{{"status", "--format=yaml"}, {"status", "--json", "--format=prometheus"}} {
		if got, _ := runIn(t, sys, nil, nil, args...); got.Code != 2 {
			t.Errorf("iosched %q: exit %d, want 2 (usage)", args, got.Code)
		}
	}
}

// fakeUdev is a udev database: keys are DISK/PROPERTY.
func fakeUdev(db map[string]string) udevdb.Lookup {
	return func(disk string) (map[string]string, error) {
		props := map[string]string{}
		for k, v := range db {
			if key, ok := strings.CutPrefix(k, disk+"/"); ok {
				props[key] = v
			}
		}
		return props, nil
	}
}
