package rulesaudit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// FS is every filesystem operation Fix and Undo perform, so that tests
// can fail any one of them and check what is left behind.
type FS interface {
	Lstat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	ReadFile(name string) ([]byte, error)
	Readlink(name string) (string, error)
	// WriteTemp creates a new file in dir with data, mode and owner,
	// synced, and returns its name.
	WriteTemp(dir string, data []byte, mode fs.FileMode, uid, gid int) (string, error)
	// SymlinkTemp creates a new symlink to target in dir, owned by
	// uid:gid, and returns its name.
	SymlinkTemp(dir, target string, uid, gid int) (string, error)
	// LinkTemp gives the file at name one more name, new, in dir, and
	// returns it.
	LinkTemp(dir, name string) (string, error)
	Rename(from, to string) error
	Remove(name string) error
	SyncDir(dir string) error
}

// OS is the real filesystem.
var OS FS = osFS{}

type osFS struct{}

func (osFS) Lstat(name string) (fs.FileInfo, error)     { return os.Lstat(name) }
func (osFS) ReadFile(name string) ([]byte, error)       { return os.ReadFile(name) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }
func (osFS) Readlink(name string) (string, error)       { return os.Readlink(name) }
func (osFS) Rename(from, to string) error               { return os.Rename(from, to) }
func (osFS) Remove(name string) error                   { return os.Remove(name) }

func (osFS) WriteTemp(dir string, data []byte, mode fs.FileMode, uid, gid int) (string, error) {
	f, err := os.CreateTemp(dir, tempPattern)
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, err = f.Write(data)
	// The owner first: chown clears setuid and setgid.
	if err == nil {
		err = chownIfNeeded(f, uid, gid)
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// chownIfNeeded gives f its owner (uid -1: the creator's), skipping the
// call when it has it already: an unprivileged run keeps its own files.
func chownIfNeeded(f *os.File, uid, gid int) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if o, g, ok := owner(fi); uid < 0 || ok && o == uid && g == gid {
		return nil
	}
	return f.Chown(uid, gid)
}

func (osFS) SymlinkTemp(dir, target string, uid, gid int) (string, error) {
	name, err := reserveName(dir, tempPattern)
	if err != nil {
		return "", err
	}
	if err := os.Symlink(target, name); err != nil {
		return "", err
	}
	fi, err := os.Lstat(name)
	if err == nil {
		if o, g, ok := owner(fi); uid >= 0 && (!ok || o != uid || g != gid) {
			err = os.Lchown(name, uid, gid)
		}
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

func (osFS) LinkTemp(dir, name string) (string, error) {
	tmp, err := reserveName(dir, keepPattern)
	if err != nil {
		return "", err
	}
	if err := os.Link(name, tmp); err != nil {
		return "", err
	}
	return tmp, nil
}

// reserveName returns a name in dir that no other process uses, for a
// link to take: a file created with pattern, as WriteTemp does, then
// removed.
func reserveName(dir, pattern string) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return "", err
	}
	return name, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// tempPattern names Fix's temporary files: hidden, so udevd never reads
// one (it reads only *.rules, and no hidden name).
const tempPattern = ".iosched-fix-*"

// keepPattern names the extra name Fix gives a hard-linked file it
// replaces, so that Undo puts that inode back under its name, every
// other name of it still sharing it.
const keepPattern = ".iosched-keep-*"

// links returns how many names a file has.
func links(fi fs.FileInfo) uint64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 1
	}
	return uint64(st.Nlink)
}

// lockDir takes an exclusive flock on dir itself, waiting for any other
// Fix or Undo on it: each reads the journal and writes it back, so two
// at once would lose one's records. The directory, not a file in it:
// nothing is left behind, and no lock file is removed under a waiter.
// A missing dir has nothing to lock.
func lockDir(dir string) (unlock func(), err error) {
	d, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	for {
		err = syscall.Flock(int(d.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	// Closing the descriptor releases the lock.
	return func() { d.Close() }, nil
}

// owner returns a file's uid and gid.
func owner(fi fs.FileInfo) (int, int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}
