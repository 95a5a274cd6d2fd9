package rulesaudit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ManifestName is the journal, in the target directory, of every file
// Fix wrote and what was there before; udevd reads only *.rules, and no
// hidden name.
const ManifestName = ".iosched-fix.json"

// State is what a path held: what Undo puts back, byte for byte, with
// its type, mode and owner.
type State struct {
	Kind string      `json:"kind"`           // "absent", "file" or "symlink"
	Data []byte      `json:"data,omitempty"` // a file's content
	Link string      `json:"link,omitempty"` // a symlink's target
	Mode fs.FileMode `json:"mode,omitempty"` // a file's permission bits
	UID  int         `json:"uid"`
	GID  int         `json:"gid"`
}

const (
	kindAbsent  = "absent"
	kindFile    = "file"
	kindSymlink = "symlink"
)

// modeBits are the mode bits a State keeps.
const modeBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// stateOf reads what path holds now.
func stateOf(fsys FS, path string) (State, error) {
	fi, err := fsys.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return State{Kind: kindAbsent}, nil
	}
	if err != nil {
		return State{}, fmt.Errorf("stat %s: %w", path, err)
	}
	s := State{}
	s.UID, s.GID, _ = owner(fi)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		s.Kind = kindSymlink
		if s.Link, err = fsys.Readlink(path); err != nil {
			return State{}, fmt.Errorf("read link %s: %w", path, err)
		}
	case fi.Mode().IsRegular():
		s.Kind, s.Mode = kindFile, fi.Mode()&modeBits
		if s.Data, err = fsys.ReadFile(path); err != nil {
			return State{}, fmt.Errorf("read %s: %w", path, err)
		}
	default:
		return State{}, fmt.Errorf("%s: neither a file nor a symlink", path)
	}
	return s, nil
}

func (s State) equal(o State) bool {
	if s.Kind != o.Kind {
		return false
	}
	switch s.Kind {
	case kindFile:
		return bytes.Equal(s.Data, o.Data) && s.Mode == o.Mode && s.UID == o.UID && s.GID == o.GID
	case kindSymlink:
		return s.Link == o.Link && s.UID == o.UID && s.GID == o.GID
	}
	return true
}

// Manifest is Fix's journal: it is written before the first rename, so
// a Fix interrupted at any point leaves what Undo completes.
type Manifest struct {
	Files []Written `json:"files"`
}

// Written is one file Fix wrote.
type Written struct {
	Path   string `json:"path"`
	Source string `json:"source"`
	// SourceSHA256 is the hash of the source as Fix read it, so that
	// audit can tell when a package update changed it since.
	SourceSHA256 string `json:"source_sha256,omitempty"`
	SHA256       string `json:"sha256"`         // of what Fix wrote
	Temp         string `json:"temp"`           // the name it was written under before the rename
	Keep         string `json:"keep,omitempty"` // a hard-linked file's extra name: Undo renames it back
	Prior        State  `json:"prior"`
}

func hash(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// ReadManifest reads target's manifest; a missing one is empty.
func ReadManifest(target string) (Manifest, error) { return readManifest(OS, target) }

func readManifest(fsys FS, target string) (Manifest, error) {
	var m Manifest
	p := filepath.Join(target, ManifestName)
	data, err := fsys.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("read %s: %w", p, err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("read %s: %w", p, err)
	}
	return m, nil
}

// writeManifest replaces target's manifest with m (removes it when m is
// empty): a temporary file, synced, renamed, the directory synced.
func writeManifest(fsys FS, target string, m Manifest) error {
	p := filepath.Join(target, ManifestName)
	if len(m.Files) == 0 {
		if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", p, err)
		}
		return syncDir(fsys, target)
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	tmp, err := fsys.WriteTemp(target, append(data, '\n'), 0o600, -1, -1)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := fsys.Rename(tmp, p); err != nil {
		fsys.Remove(tmp)
		return fmt.Errorf("write %s: %w", p, err)
	}
	return syncDir(fsys, target)
}

func syncDir(fsys FS, dir string) error {
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// put makes path hold s: a new file or link under a temporary name,
// renamed over path, or path removed for "absent".
func put(fsys FS, path string, s State) error {
	var tmp string
	var err error
	switch s.Kind {
	case kindAbsent:
		if err := fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", path, err)
		}
		return nil
	case kindSymlink:
		tmp, err = fsys.SymlinkTemp(filepath.Dir(path), s.Link, s.UID, s.GID)
	default:
		tmp, err = fsys.WriteTemp(filepath.Dir(path), s.Data, s.Mode, s.UID, s.GID)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		fsys.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ApplyFix writes the plan into target. It works as a journal: every
// new file is written and synced under a temporary name, the manifest
// (with what each path held before) is written next, and only then are
// the files renamed into place. A failure undoes what was done; if that
// fails too, the manifest stays and `iosched audit --undo` completes it.
// It holds target's lock throughout, so concurrent runs take turns.
func ApplyFix(target string, plan []Change) error { return applyFix(OS, target, plan) }

// CheckFix is what ApplyFix checks before it writes anything: a
// Refusal when a path of plan is recorded by an earlier run or changed
// since it was planned. `--fix --dry-run` runs it so that it exits as
// `--fix` would.
func CheckFix(target string, plan []Change) error {
	unlock, err := lockDir(target)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = checkFix(OS, target, plan)
	return err
}

func checkFix(fsys FS, target string, plan []Change) (Manifest, error) {
	old, err := readManifest(fsys, target)
	if err != nil {
		return old, err
	}
	journal := filepath.Join(target, ManifestName)
	recorded := map[string]Written{}
	for _, w := range old.Files {
		recorded[w.Path] = w
	}
	var refused []error
	for _, c := range plan {
		cur, err := stateOf(fsys, c.Path)
		if err != nil {
			return old, err
		}
		if w, ok := recorded[c.Path]; ok {
			why := fmt.Sprintf("an earlier `iosched audit --fix` wrote it (recorded in %s): `iosched audit --undo` puts it back first", journal)
			if cur.Kind != kindFile || hash(cur.Data) != w.SHA256 {
				why = fmt.Sprintf("changed since an earlier `iosched audit --fix` wrote it (recorded in %s): "+
					"`iosched audit --undo --forget %s` keeps it as it is now and drops the record, then --fix converts it again", journal, c.Path)
			}
			refused = append(refused, Refusal{File: c.Path, Why: why})
			continue
		}
		if !cur.equal(c.Prior) {
			refused = append(refused, Refusal{File: c.Path, Why: "changed since --fix read it"})
		}
	}
	return old, errors.Join(refused...)
}

func applyFix(fsys FS, target string, plan []Change) error {
	unlock, err := lockDir(target)
	if err != nil {
		return err
	}
	defer unlock()
	old, err := checkFix(fsys, target, plan)
	if err != nil {
		return err
	}
	manifest := filepath.Join(target, ManifestName)
	oldState, err := stateOf(fsys, manifest)
	if err != nil {
		return err
	}
	restoreManifest := func() error {
		if err := put(fsys, manifest, oldState); err != nil {
			return err
		}
		return syncDir(fsys, target)
	}
	// 1. The new files, under temporary names.
	m := Manifest{Files: append([]Written(nil), old.Files...)}
	removeTemps := func(ws []Written) {
		for _, w := range ws {
			fsys.Remove(w.Temp)
			if w.Keep != "" {
				fsys.Remove(w.Keep)
			}
		}
	}
	var fresh []Written
	for _, c := range plan {
		mode, uid, gid := fs.FileMode(0o644), -1, -1
		if c.Prior.Kind == kindFile {
			mode, uid, gid = c.Prior.Mode, c.Prior.UID, c.Prior.GID
		}
		tmp, err := fsys.WriteTemp(target, c.Data, mode, uid, gid)
		if err != nil {
			removeTemps(fresh)
			return fmt.Errorf("write %s: %w: nothing changed", c.Path, err)
		}
		w := Written{Path: c.Path, Source: c.Source, SourceSHA256: hash(c.Base), SHA256: hash(c.Data), Temp: tmp, Prior: c.Prior}
		fresh = append(fresh, w)
		if c.Prior.Kind == kindFile {
			fi, err := fsys.Lstat(c.Path)
			if err == nil && links(fi) > 1 {
				w.Keep, err = fsys.LinkTemp(target, c.Path)
			}
			if err != nil {
				removeTemps(fresh)
				return fmt.Errorf("write %s: %w: nothing changed", c.Path, err)
			}
			fresh[len(fresh)-1] = w
		}
	}
	// 2. The journal, before anything the user has is touched.
	m.Files = append(m.Files, fresh...)
	if err := writeManifest(fsys, target, m); err != nil {
		if rerr := restoreManifest(); rerr != nil {
			return fmt.Errorf("%w; and restoring the manifest: %v: `iosched audit --undo` completes it", err, rerr)
		}
		removeTemps(fresh)
		return fmt.Errorf("%w: nothing changed", err)
	}
	// 3. The renames, then the directory synced.
	for i, w := range fresh {
		err := fsys.Rename(w.Temp, w.Path)
		if err == nil && i == len(fresh)-1 {
			err = syncDir(fsys, target)
			i++
		}
		if err == nil {
			continue
		}
		err = fmt.Errorf("write %s: %w", w.Path, err)
		var failed []error
		for _, d := range fresh[:i] {
			if rerr := restore(fsys, d); rerr != nil {
				failed = append(failed, rerr)
			}
		}
		removeTemps(fresh[i:])
		if len(failed) == 0 {
			if rerr := restoreManifest(); rerr != nil {
				failed = append(failed, rerr)
			}
		}
		if len(failed) > 0 {
			return fmt.Errorf("%w; undoing it: %w: `iosched audit --undo` completes it from %s",
				err, errors.Join(failed...), filepath.Join(target, ManifestName))
		}
		return fmt.Errorf("%w: every file put back as it was", err)
	}
	return nil
}

// restore puts w's prior state back at its path: the kept inode when
// the file had other names, so that they share it again.
func restore(fsys FS, w Written) error {
	if w.Keep != "" {
		if err := fsys.Rename(w.Keep, w.Path); err != nil {
			return fmt.Errorf("write %s: %w", w.Path, err)
		}
		return nil
	}
	return put(fsys, w.Path, w.Prior)
}

// Stale lists, one line each, the converted copies in target whose
// source in another directory (a vendor file in /usr/lib) changed or
// went since --fix converted it: udevd reads the copy in its place, so
// the update is ignored until the copy is converted again.
func Stale(target string) ([]string, error) {
	m, err := readManifest(OS, target)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, w := range m.Files {
		if w.SourceSHA256 == "" || w.Source == w.Path {
			continue
		}
		redo := fmt.Sprintf("`iosched audit --undo` then `iosched audit --fix` converts the new version (or, to keep the copy, `iosched audit --undo --forget %s`)", w.Path)
		data, err := os.ReadFile(w.Source)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, fmt.Sprintf("%s: converted from %s, which is gone since: udevd reads the converted copy still; %s", w.Path, w.Source, redo))
		case err != nil:
			return out, fmt.Errorf("read %s: %w", w.Source, err)
		case hash(data) != w.SourceSHA256:
			out = append(out, fmt.Sprintf("%s: converted from %s, which changed since (a package update?): udevd reads the converted copy in its place, so the change is ignored; %s", w.Path, w.Source, redo))
		}
	}
	return out, nil
}

// UndoResult is what Undo did with each file of the manifest.
type UndoResult struct {
	Removed  []string // written new by Fix
	Restored []string // the file that was there is back
	Gone     []string // removed by someone else since
	Kept     []string // one line each: what was kept and why
	Temps    []string // temporary files an interrupted Fix left
}

// Undo puts back what target's manifest records: each path that still
// holds what Fix wrote gets its earlier state back. It touches only
// *.rules files of target itself; a file changed since is kept, with
// its record, and said so.
func Undo(target string) (UndoResult, error) { return undo(OS, target) }

func undo(fsys FS, target string) (UndoResult, error) {
	var res UndoResult
	unlock, err := lockDir(target)
	if err != nil {
		return res, err
	}
	defer unlock()
	m, err := readManifest(fsys, target)
	if err != nil {
		return res, err
	}
	var left []Written
	for _, w := range m.Files {
		if !owned(target, w.Path, ".rules") {
			res.Kept = append(res.Kept, fmt.Sprintf("kept the record of %q: not a rules file of %s, so not touched", w.Path, target))
			left = append(left, w)
			continue
		}
		interrupted := false // Fix stopped before renaming this one
		if w.Temp != "" && owned(target, w.Temp, "") && strings.HasPrefix(filepath.Base(w.Temp), strings.TrimSuffix(tempPattern, "*")) {
			err := fsys.Remove(w.Temp)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return res, fmt.Errorf("undo %s: remove %s: %w", w.Path, w.Temp, err)
			}
			interrupted = err == nil
		}
		cur, err := stateOf(fsys, w.Path)
		if err != nil {
			return res, fmt.Errorf("undo: %w", err)
		}
		switch {
		case cur.Kind == kindFile && hash(cur.Data) == w.SHA256:
			if !keptLink(fsys, target, w) {
				w.Keep = ""
			}
			if err := restore(fsys, w); err != nil {
				return res, fmt.Errorf("undo: %w", err)
			}
			if w.Prior.Kind == kindAbsent {
				res.Removed = append(res.Removed, w.Path)
			} else {
				res.Restored = append(res.Restored, w.Path)
			}
		case cur.equal(w.Prior) && (interrupted || cur.Kind != kindAbsent):
			// Never renamed into place, or put back by hand.
		case cur.Kind == kindAbsent:
			res.Gone = append(res.Gone, w.Path)
		default:
			res.Kept = append(res.Kept, fmt.Sprintf("kept %s: changed since `iosched audit --fix` wrote it; its original stays recorded in %s; "+
				"`iosched audit --undo --forget %s` keeps it as it is and drops the record",
				w.Path, filepath.Join(target, ManifestName), w.Path))
			left = append(left, w)
			continue
		}
		// Done with: a kept inode not renamed back is a stray name.
		if keptLink(fsys, target, w) {
			if err := fsys.Remove(w.Keep); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return res, fmt.Errorf("undo %s: remove %s: %w", w.Path, w.Keep, err)
			}
		}
	}
	temps, err := strayTemps(fsys, target, left)
	if err != nil {
		return res, err
	}
	for _, p := range temps {
		if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("undo: remove %s: %w", p, err)
		}
		res.Temps = append(res.Temps, p)
	}
	if len(m.Files) == 0 && len(temps) == 0 {
		return res, nil
	}
	if err := syncDir(fsys, target); err != nil {
		return res, err
	}
	return res, writeManifest(fsys, target, Manifest{Files: left})
}

// keptLink reports whether w's extra name of a hard-linked file is one
// Fix made in target and is there.
func keptLink(fsys FS, target string, w Written) bool {
	if w.Keep == "" || !owned(target, w.Keep, "") || !strings.HasPrefix(filepath.Base(w.Keep), strings.TrimSuffix(keepPattern, "*")) {
		return false
	}
	fi, err := fsys.Lstat(w.Keep)
	return err == nil && fi.Mode().IsRegular()
}

// Forget drops target's record of path, leaving path as it is: the way
// out for a file the user changed after --fix converted it, which Undo
// keeps and a new Fix will not write over while it is recorded.
func Forget(target, path string) error {
	unlock, err := lockDir(target)
	if err != nil {
		return err
	}
	defer unlock()
	m, err := readManifest(OS, target)
	if err != nil {
		return err
	}
	a, _ := filepath.Abs(path)
	var left []Written
	var dropped *Written
	for i, w := range m.Files {
		if wa, _ := filepath.Abs(w.Path); wa == a && dropped == nil {
			dropped = &m.Files[i]
			continue
		}
		left = append(left, w)
	}
	if dropped == nil {
		return fmt.Errorf("forget %s: %s has no record of it", path, filepath.Join(target, ManifestName))
	}
	if err := writeManifest(OS, target, Manifest{Files: left}); err != nil {
		return err
	}
	if keptLink(OS, target, *dropped) {
		if err := OS.Remove(dropped.Keep); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("forget %s: remove %s: %w", path, dropped.Keep, err)
		}
	}
	return nil
}

// strayTemps lists the temporary files of Fix in target (its pattern,
// a file or link) and the extra names of hard-linked files no record
// of left keeps: an interrupted Fix may leave them before its manifest
// names them. udevd never reads them.
func strayTemps(fsys FS, target string, left []Written) ([]string, error) {
	ents, err := fsys.ReadDir(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("undo: list %s: %w", target, err)
	}
	keep := map[string]bool{}
	for _, w := range left {
		keep[filepath.Base(w.Keep)] = true
	}
	var out []string
	for _, e := range ents {
		n, ok := strings.CutPrefix(e.Name(), strings.TrimSuffix(tempPattern, "*"))
		if !ok {
			n, ok = strings.CutPrefix(e.Name(), strings.TrimSuffix(keepPattern, "*"))
			ok = ok && !keep[e.Name()]
		}
		if !ok || n == "" || strings.Trim(n, "0123456789") != "" || !(e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0) {
			continue
		}
		out = append(out, filepath.Join(target, e.Name()))
	}
	return out, nil
}

// owned reports whether p names an entry of dir itself, ending in
// suffix, with no hidden name unless suffix is "".
func owned(dir, p, suffix string) bool {
	if filepath.Clean(filepath.Dir(p)) != filepath.Clean(dir) || filepath.Base(p) != filepath.Clean(filepath.Base(p)) {
		return false
	}
	b := filepath.Base(p)
	if suffix == "" {
		return b != "." && b != ".."
	}
	return strings.HasSuffix(b, suffix) && !strings.HasPrefix(b, ".")
}
