package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var changelogTop = regexp.MustCompile(`^[a-z0-9.+-]+ \(([^()\s]+)\) `)

// TestVersion: both built binaries print the top version of
// debian/changelog, the one place the version is kept.
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
	want := got{0, "iosched " + string(m[1]) + "\n"}
	for _, bin := range []string{b.Cgo, b.Static} {
		for _, arg := range []string{"--version", "version"} {
			o := run(t, false, nil, bin, arg)
			if diff := cmp.Diff(want, o.got()); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", bin, arg, diff)
			}
		}
	}
}
