package testhost

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/iosched/iosched/helper/sysfs"
)

func TestRepoRoot(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := RepoRoot(deep); !errors.Is(err, ErrNoRoot) {
		t.Errorf("RepoRoot without go.mod: err %v, want ErrNoRoot", err)
	}
	// Another module's go.mod on the way up is not ours.
	if err := os.WriteFile(filepath.Join(root, "a", "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+modulePath+"\n\ngo 1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := RepoRoot(deep)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(root, got); diff != "" {
		t.Errorf("RepoRoot(%s) (-want +got):\n%s", deep, diff)
	}
}

func TestBlockView(t *testing.T) {
	sys := sysfs.FS(t.TempDir())
	if err := os.MkdirAll(sys.Path("block"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"loop0", "loop1", "vda"} {
		if err := os.Symlink("../devices/virtual/block/"+d, sys.Path("block", d)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := BlockView(sys, dir, "loop1", "loop0"); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if got[e.Name()], err = os.Readlink(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{
		"loop0": "../devices/virtual/block/loop0",
		"loop1": "../devices/virtual/block/loop1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("block view (-want +got):\n%s", diff)
	}
	if err := BlockView(sys, t.TempDir(), "sdz"); err == nil {
		t.Error("BlockView of a disk sysfs does not list: no error")
	}
}
