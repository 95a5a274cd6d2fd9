package integration

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var changelogTop = regexp.MustCompile(`^[a-z0-9.+-]+ \(([^()\s]+)\) `)

// TestVersion: both built binaries print the upstream part of the top
// version of debian/changelog, the one place the version is kept (the
// Debian revision after the last "-" is the package's, not the program's).
func TestVersion(t *testing.T) {
	b := setup(t)
	cl, err := os.ReadFile(filepath.Join(repoRoot(t), "debian", "changelog"))
	if err != nil {
		t.Fatal(err)
	}
	m := changelogTop.FindSubmatch(cl)
	if m == nil {
		t.Fatalf("debian/changelog: no version in the first line %q", cl[:min(len(cl), 80)])
	}
	upstream := string(m[1])
	if i := strings.LastIndex(upstream, "-"); i > 0 {
		upstream = upstream[:i]
	}
	want := got{0, "iosched " + upstream + "\n"}
	for _, bin := range []string{b.Cgo, b.Static} {
		for _, arg := range []string{"--version", "version"} {
			o := run(t, false, nil, bin, arg)
			if diff := cmp.Diff(want, o.got()); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", bin, arg, diff)
			}
		}
	}
}

// TestOutputUnwritable: a command whose answer cannot be written (stdout
// on a full device) exits 1 and says so, as a real binary on a real disk.
func TestOutputUnwritable(t *testing.T) {
	b := setup(t)
	d := newLoop(t, "")
	force(t, d, "none")
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	for _, args := range [][]string{
		{"set", d.Name, "none"},
		{"set", d.Name, "--dry-run", "kyber"},
		{"version"},
		{"set", "--help"},
	} {
		cmd := exec.Command(b.Static, args...)
		cmd.Stdout = full
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("iosched %q >/dev/full: %v, stderr %q; want exit 1 naming the write error", args, err, stderr.String())
		}
	}
	if a := active(t, d); a != "none" {
		t.Errorf("the dry run switched %s to %s", d.Name, a)
	}
}

// TestProbeAsUser: probe run by a user says once that it needs root.
func TestProbeAsUser(t *testing.T) {
	b := setup(t, "setpriv")
	cmd := exec.Command(nobody[0], append(nobody[1:], b.Static, "probe")...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("probe as uid 65534: %v, want exit 1\n%s", err, out)
	}
	if diff := cmp.Diff("iosched: probe needs root: it attaches a loop device and writes its queue attributes\n", string(out)); diff != "" {
		t.Errorf("probe as uid 65534 (-want +got):\n%s", diff)
	}
}
