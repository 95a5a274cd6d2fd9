package pin

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIdentity(t *testing.T) {
	tests := []struct {
		props    map[string]string
		key, val string
		err      error
	}{
		{map[string]string{"ID_WWN": "0x5000c500a1b2c3d4", "ID_SERIAL": "ST1000_Z1", "ID_PATH": "pci-0000:00:1f.2-ata-1"}, "ID_WWN", "0x5000c500a1b2c3d4", nil},
		{map[string]string{"ID_SERIAL": "QEMU_HARDDISK_QM00001", "ID_PATH": "pci-0000:00:1f.2-ata-1"}, "ID_SERIAL", "QEMU_HARDDISK_QM00001", nil},
		{map[string]string{"ID_SERIAL": "odd*serial", "ID_PATH": "pci-0000:00:1f.2-ata-1"}, "ID_PATH", "pci-0000:00:1f.2-ata-1", nil},
		{map[string]string{"DEVNAME": "/dev/nullb0"}, "", "", ErrNoIdentity},
	}
	for _, tt := range tests {
		k, v, err := Identity(tt.props)
		if k != tt.key || v != tt.val || !errors.Is(err, tt.err) {
			t.Errorf("Identity(%v) = %q, %q, %v; want %q, %q, %v", tt.props, k, v, err, tt.key, tt.val, tt.err)
		}
	}
}

// TestSetRemove: pins are set and replaced in place, other lines stay
// byte for byte, and removing every pin leaves the directory as it was.
func TestSetRemove(t *testing.T) {
	dir := t.TempDir()
	f := File{dir}
	a := Pin{"ID_WWN", "0x5000c500a1b2c3d4", [][2]string{{"IOSCHED_SCHEDULER", "bfq,mq-deadline"}}}
	b := Pin{"ID_SERIAL", "QEMU_HARDDISK_QM00002", [][2]string{{"IOSCHED_ATTR_read_ahead_kb", "256"}}}
	if err := f.Set(a); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f.Path(), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := f.Set(b); err != nil {
		t.Fatal(err)
	}
	a2 := a
	a2.Props = [][2]string{{"IOSCHED_SCHEDULER", "none"}}
	if err := f.Set(a2); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(f.Path())
	want := header + a2.Line() + b.Line()
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	wantLine := `ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ENV{ID_WWN}=="0x5000c500a1b2c3d4", ENV{IOSCHED_PIN}="ID_WWN=0x5000c500a1b2c3d4", ENV{IOSCHED_SCHEDULER}="none", ENV{IOSCHED_PIN_SCHEDULER}="none"` + "\n"
	if diff := cmp.Diff(wantLine, a2.Line()); diff != "" {
		t.Errorf("line (-want +got):\n%s", diff)
	}
	if fi, _ := os.Stat(f.Path()); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v after a rewrite, want 0640 kept", fi.Mode().Perm())
	}
	// Unpin b: the file is what it was with a alone (a's line as set).
	if found, err := f.Remove(b.ID()); !found || err != nil {
		t.Fatalf("Remove(b) = %v, %v", found, err)
	}
	got, _ = os.ReadFile(f.Path())
	if diff := cmp.Diff(header+a2.Line(), string(got)); diff != "" {
		t.Errorf("after unpin (-want +got):\n%s", diff)
	}
	if found, err := f.Remove("ID_SERIAL=nosuch"); found || err != nil {
		t.Errorf("Remove(nosuch) = %v, %v; want false, nil", found, err)
	}
	if found, err := f.Remove(a.ID()); !found || err != nil {
		t.Fatalf("Remove(a) = %v, %v", found, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("after the last unpin the directory holds %v, want nothing", ents)
	}
}

func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	f := File{dir}
	mine := "ACTION==\"add\", ENV{IOSCHED_SCHEDULER}=\"bfq\"\n"
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Pin{"ID_WWN", "0x1", [][2]string{{"IOSCHED_SCHEDULER", "bfq"}}}
	if err := f.Set(p); !errors.Is(err, ErrNotOurs) {
		t.Errorf("Set over a file of the user's: %v, want ErrNotOurs", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, FileName)); string(got) != mine {
		t.Errorf("the user's file changed: %q", got)
	}
	bad := Pin{"ID_WWN", "0x1", [][2]string{{"IOSCHED_ATTR_write_cache", "write back$(reboot)"}}}
	if err := (File{t.TempDir()}).Set(bad); err == nil {
		t.Error("a value with $ accepted")
	}
}
