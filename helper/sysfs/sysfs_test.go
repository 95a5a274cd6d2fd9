package sysfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestQueue(t *testing.T) {
	root := t.TempDir()
	qdir := filepath.Join(root, "block", "sdx", "queue")
	if err := os.MkdirAll(filepath.Join(qdir, "iosched"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(qdir, "scheduler"), []byte("none [bfq] \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(qdir, "evil")); err != nil {
		t.Fatal(err)
	}
	q := Queue{FS: FS(root), Disk: "sdx"}
	if got, err := q.Read("scheduler"); err != nil || got != "none [bfq]" {
		t.Errorf("Read(scheduler) = %q, %v", got, err)
	}
	for _, bad := range []string{"", "/etc/passwd", "../../sdy/queue/scheduler", "iosched/../../x", "a\x00b", "a//b", "."} {
		if err := q.Write(bad, "x"); !errors.Is(err, ErrBadAttr) {
			t.Errorf("Write(%q) = %v, want ErrBadAttr", bad, err)
		}
		if _, err := q.Read(bad); !errors.Is(err, ErrBadAttr) {
			t.Errorf("Read(%q) = %v, want ErrBadAttr", bad, err)
		}
	}
	// No file is ever created, and a symlink is not followed.
	if err := q.Write("nr_requests", "4"); err == nil {
		t.Error("Write created a missing attribute")
	}
	if err := q.Write("evil", "x"); err == nil {
		t.Error("Write followed a symlink")
	}
	if _, err := os.Stat(filepath.Join(qdir, "nr_requests")); !os.IsNotExist(err) {
		t.Errorf("nr_requests exists after a failed write: %v", err)
	}
	if err := q.Write("scheduler", "kyber"); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(filepath.Join(qdir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("ReadFile error %v does not name the file", err)
	}
}

func TestDisks(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"sdb", "loop0", "nvme0n1", "sda"} {
		if err := os.MkdirAll(filepath.Join(root, "block", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got, err := FS(root).Disks()
	if want := "loop0 nvme0n1 sda sdb"; err != nil || strings.Join(got, " ") != want {
		t.Errorf("Disks() = %q, %v; want %q", got, err, want)
	}
	if _, err := FS(filepath.Join(root, "nosuch")).Disks(); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nosuch/block") {
		t.Errorf("Disks() of a tree without block/ = %v, want ErrNotExist naming the directory", err)
	}
}
