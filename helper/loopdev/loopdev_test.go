package loopdev

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestNewClose attaches a loop device of its own, checks the kernel shows
// it with the size asked for, and that Close detaches it.
func TestNewClose(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("attaching a loop device needs root")
	}
	d, err := New(t.TempDir(), 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			d.Close()
		}
	})
	if diff := cmp.Diff("/dev/"+d.Name, d.Node()); diff != "" {
		t.Errorf("Node (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(d.Node()); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Errorf("%s: not a device node (%v)", d.Node(), err)
	}
	size, err := os.ReadFile("/sys/block/" + d.Name + "/size")
	if err != nil {
		t.Fatal(err)
	}
	// size counts 512-byte sectors.
	if diff := cmp.Diff("16384", strings.TrimSpace(string(size))); diff != "" {
		t.Errorf("%s size (-want +got):\n%s", d.Name, diff)
	}
	backing := "/sys/block/" + d.Name + "/loop/backing_file"
	if _, err := os.Stat(backing); err != nil {
		t.Fatalf("attached, but %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	// Autoclear detaches when the last reference goes; a udev worker
	// probing the new device may hold it a moment longer.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(backing); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still attached 5 s after Close", d.Name)
		}
	}
}
