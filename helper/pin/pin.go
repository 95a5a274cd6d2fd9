// Package pin keeps a disk's own policy keyed by what the disk is, not
// by its kernel name, which changes when disks are probed in another
// order: one rules file of iosched's own, one line a disk, matching the
// most stable identity udev gives the disk. 60-iosched.rules records the
// class first; the pin, sorting after it (and after
// 60-persistent-storage.rules, which sets the identities), overrides it.
package pin

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// FileName is the rules file pins live in, in /etc/udev/rules.d.
const FileName = "61-iosched-pin.rules"

// The properties a pin sets beside the policy: which identity it matched
// ("ID_WWN=0x5000c500a1b2c3d4"), and the scheduler list it set, so that
// status can tell a pin's list from one another rule set after it.
const (
	Property          = "IOSCHED_PIN"
	SchedulerProperty = "IOSCHED_PIN_SCHEDULER"
)

// Identities are the udev properties a pin matches, most stable first:
// the World Wide Name the disk reports (ID_WWN: SCSI VPD page 0x83, an
// NVMe EUI or NGUID), its vendor, model and serial (ID_SERIAL, the
// by-id name), then its path through the buses (ID_PATH, the by-path
// name: stable while it stays in its slot). All are set by systemd's
// 60-persistent-storage.rules.
var Identities = []string{"ID_WWN", "ID_SERIAL", "ID_PATH"}

// Names reports whether a udev property is one a pin reads or sets: an
// identity, Property or SchedulerProperty.
func Names(prop string) bool {
	switch prop {
	case Property, SchedulerProperty:
		return true
	}
	for _, k := range Identities {
		if prop == k {
			return true
		}
	}
	return false
}

// ErrNoIdentity means udev gives the disk no identity a pin can match.
var ErrNoIdentity = errors.New("udev gives the disk no stable identity (ID_WWN, ID_SERIAL, ID_PATH)")

// ErrNotOurs means the rules file exists but iosched did not write it.
var ErrNotOurs = errors.New("not written by iosched pin")

// header opens the file: what marks it as iosched's.
const header = "# Written by `iosched pin`; `iosched unpin DISK` removes a disk's line.\n" +
	"# Each line matches one disk by the identity udev gives it.\n"

// Identity picks the most stable identity among a disk's udev
// properties: KEY and its value. A value a rule cannot match exactly
// (glob characters, quotes, control bytes) is passed over.
func Identity(props map[string]string) (key, value string, err error) {
	for _, k := range Identities {
		if v := props[k]; v != "" && literal(v) {
			return k, v, nil
		}
	}
	return "", "", ErrNoIdentity
}

// literal reports whether v matches only itself in a udev rule's ==.
func literal(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c >= 0x7f || strings.IndexByte(`"\*?[]|`, c) >= 0 {
			return false
		}
	}
	return true
}

// Pin is one disk's line.
type Pin struct {
	Key, Value string
	// Props are the policy's properties in order: IOSCHED_SCHEDULER,
	// IOSCHED_ATTR_*, IOSCHED_TUNE_*.
	Props [][2]string
}

// Check refuses a property value a rule would not keep as written:
// udev substitutes $ and % in an assignment, and a quote or backslash
// would end or escape it.
func (p Pin) Check() error {
	for _, kv := range p.Props {
		for i := 0; i < len(kv[1]); i++ {
			if c := kv[1][i]; c < 0x20 || c == 0x7f || strings.IndexByte(`"\$%`, c) >= 0 {
				return fmt.Errorf("%s=%q: a rule cannot hold byte %q", kv[0], kv[1], c)
			}
		}
	}
	return nil
}

// ID is the identity as Property records it.
func (p Pin) ID() string { return p.Key + "=" + p.Value }

// Line renders the rule.
func (p Pin) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, `ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ENV{%s}=="%s", ENV{%s}="%s"`, p.Key, p.Value, Property, p.ID())
	for _, kv := range p.Props {
		fmt.Fprintf(&b, `, ENV{%s}="%s"`, kv[0], kv[1])
		if kv[0] == "IOSCHED_SCHEDULER" {
			fmt.Fprintf(&b, `, ENV{%s}="%s"`, SchedulerProperty, kv[1])
		}
	}
	return b.String() + "\n"
}

// File is the pins file of one rules directory.
type File struct{ Dir string }

// Path is the file's path.
func (f File) Path() string { return filepath.Join(f.Dir, FileName) }

// read returns the file's lines after the header; absent is none.
func (f File) read() (lines []string, mode fs.FileMode, uid, gid int, err error) {
	data, err := os.ReadFile(f.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, -1, -1, nil
	}
	if err != nil {
		return nil, 0, 0, 0, err
	}
	body, ok := bytes.CutPrefix(data, []byte(header))
	if !ok {
		return nil, 0, 0, 0, fmt.Errorf("%s: %w: nothing written", f.Path(), ErrNotOurs)
	}
	fi, err := os.Stat(f.Path())
	if err != nil {
		return nil, 0, 0, 0, err
	}
	uid, gid = -1, -1
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		uid, gid = int(st.Uid), int(st.Gid)
	}
	for _, l := range strings.SplitAfter(string(body), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines, fi.Mode().Perm(), uid, gid, nil
}

// marker is what a line of id holds.
func marker(id string) string { return fmt.Sprintf(`ENV{%s}="%s"`, Property, id) }

// Set writes p's line in place of the one with the same identity, or
// last; the other lines stay byte for byte.
func (f File) Set(p Pin) error {
	if err := p.Check(); err != nil {
		return err
	}
	lines, mode, uid, gid, err := f.read()
	if err != nil {
		return err
	}
	line, done := p.Line(), false
	for i, l := range lines {
		if strings.Contains(l, marker(p.ID())) {
			lines[i], done = line, true
		}
	}
	if !done {
		lines = append(lines, line)
	}
	return f.write(lines, mode, uid, gid)
}

// Remove drops the line of identity id ("ID_WWN=..."), and the file
// with the last one, so that pinning and unpinning every disk leaves the
// directory as it was. found is false when no line has id.
func (f File) Remove(id string) (found bool, err error) {
	lines, mode, uid, gid, err := f.read()
	if err != nil {
		return false, err
	}
	var kept []string
	for _, l := range lines {
		if strings.Contains(l, marker(id)) {
			found = true
			continue
		}
		kept = append(kept, l)
	}
	if !found {
		return false, nil
	}
	if len(kept) == 0 {
		if err := os.Remove(f.Path()); err != nil {
			return true, err
		}
		return true, syncDir(f.Dir)
	}
	return true, f.write(kept, mode, uid, gid)
}

// write replaces the file atomically: the new content is written and
// synced under a temporary name udevd does not read (not *.rules), then
// renamed over the file, and the directory synced. A failure leaves the
// file as it was.
func (f File) write(lines []string, mode fs.FileMode, uid, gid int) error {
	tmp, err := os.CreateTemp(f.Dir, ".iosched-pin-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", f.Path(), err)
	}
	defer os.Remove(tmp.Name())
	data := header + strings.Join(lines, "")
	_, err = tmp.WriteString(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil && uid >= 0 {
		err = tmp.Chown(uid, gid)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.Path())
	}
	if err == nil {
		err = syncDir(f.Dir)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", f.Path(), err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
