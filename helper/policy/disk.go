package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/iosched/iosched/helper/apply"
	"github.com/iosched/iosched/helper/disklock"
	"github.com/iosched/iosched/helper/jiffies"
	"github.com/iosched/iosched/helper/loopdev"
	"github.com/iosched/iosched/helper/queueattr"
	"github.com/iosched/iosched/helper/sched"
	"github.com/iosched/iosched/helper/sysfs"
)

// Disk is one whole disk and what applying a policy to it needs.
type Disk struct {
	Queue apply.Queue // sysfs.Queue, or a model of the kernel in tests
	// Sys is the sysfs root, where other disks show the tunables of a
	// scheduler this disk does not run yet.
	Sys   sysfs.FS
	Locks disklock.Dir
	// Loadable reports whether the kernel could load a scheduler's
	// module (kmod.Index.Loadable); nil: none can be.
	Loadable func(name string) (bool, error)
	// Dev is the device directory ("/dev"), where a loop device's node
	// tells what no attribute does (queueattr.LoopReadOnly); "" asks no
	// node.
	Dev string
	// HZ finds the running kernel's HZ and where it came from
	// (jiffies.Find), which values kept in jiffies depend on; nil: not
	// known, and only what every HZ keeps is taken.
	HZ func() (jiffies.HZ, string, error)
}

func (d Disk) apply(dryRun bool) apply.Disk {
	q := kernelAware{Queue: d.Queue, hz: d.HZ}
	if d.Dev != "" {
		q.node = filepath.Join(d.Dev, d.Queue.Name())
	}
	a := apply.NewDisk(q)
	a.DryRun = dryRun
	a.Loadable = d.Loadable
	return a
}

// Plan is what Check found for one disk, reading each file it compares
// once: the policy that can be applied, what it would change, and what
// was refused. Apply carries it out.
type Plan struct {
	Policy  Policy  // the policy without the refused settings
	Refused []error // one per refused setting: nothing of it is written
	// Report is the read-only pass: its lines and the typed changes.
	Report
	queue *memo // what Check read, for Apply
}

// Check is the validation pass: it only reads, each file at most once.
// It drops the settings that cannot be applied as asked on this queue,
// with one error each: a value the kernel would refuse, clamp, wrap or
// ignore here (wrapping queueattr.ErrBadValue), an attribute the queue
// lacks (apply.ErrNoAttr), a tunable the scheduler that will be active
// does not have. It runs before the first file is opened for writing, so
// a refused setting never follows a write of another.
func (d Disk) Check(p Policy) Plan {
	m := newMemo(d.Queue)
	d.Queue = m
	target := d.target(p)
	var bad []error
	var kept []Setting
	for _, s := range p.Settings {
		if err := d.checkTunable(s, target); err != nil {
			bad = append(bad, err)
			continue
		}
		kept = append(kept, s)
	}
	p.Settings = kept
	dry := d.pass(p, true)
	if dry.Gone {
		return Plan{Policy: p, Report: dry, queue: m}
	}
	kept = nil
	for i, s := range p.Settings {
		if err := dry.settingErrs[i]; refusal(err) {
			bad = append(bad, err)
			continue
		}
		kept = append(kept, s)
	}
	p.Settings = kept
	if len(bad) > 0 {
		// The pass again without them: its report is the plan's.
		dry = d.pass(p, true)
	}
	return Plan{Policy: p, Refused: bad, Report: dry, queue: m}
}

func refusal(err error) bool {
	return errors.Is(err, queueattr.ErrBadValue) || errors.Is(err, apply.ErrNoAttr)
}

// target is the scheduler that will be active after the policy's switch,
// or "" when that cannot be told without writing.
func (d Disk) target(p Policy) string {
	if p.Wanted != nil {
		res, err := d.apply(true).Scheduler(p.Wanted)
		switch {
		case err == nil:
			return res.To
		case errors.Is(err, apply.ErrUnavailable) && p.Keep:
			return res.From
		}
		return ""
	}
	v, err := d.Queue.Read(queueattr.Scheduler)
	if err != nil {
		return ""
	}
	l, err := sched.Parse(v)
	if err != nil {
		return ""
	}
	return l.Active
}

// checkTunable refuses an iosched/NAME that target lacks.
func (d Disk) checkTunable(s Setting, target string) error {
	if s.Spec.Kind != queueattr.Tunable || target == "" {
		return nil
	}
	name := strings.TrimPrefix(s.Spec.Name, queueattr.TunablePrefix)
	if sched.IsNone(target) {
		return fmt.Errorf("%s: %s=%q: scheduler none has no tunables", d.Queue.Name(), Clip(s.From), s.Value)
	}
	has, ok := d.Tunables(target)
	if ok && !slices.Contains(has, name) {
		return fmt.Errorf("%s: %s=%q: %s is not a tunable of %s (it has %s)",
			d.Queue.Name(), Clip(s.From), s.Value, Clip(name), target, strings.Join(has, " "))
	}
	return nil
}

// Tunables lists the tunables of scheduler as the running kernel has
// them: the disk's own queue/iosched/ when scheduler is active there,
// else that of another disk running it, else the table of the kernel
// sources iosched read (queueattr.Tunables). ok is false when none of
// them knows the scheduler.
func (d Disk) Tunables(scheduler string) (names []string, ok bool) {
	if l, err := d.line(); err == nil && l.Active == scheduler {
		if names, ok := listTunables(d.Queue.Path("iosched")); ok {
			return names, true
		}
	}
	if d.Sys != "" {
		if names, ok := d.tunablesElsewhere(scheduler); ok {
			return names, true
		}
	}
	names, ok = queueattr.Tunables[scheduler]
	return names, ok
}

func (d Disk) line() (sched.Line, error) {
	v, err := d.Queue.Read(queueattr.Scheduler)
	if err != nil {
		return sched.Line{}, err
	}
	return sched.Parse(v)
}

// tunablesElsewhere reads another disk's queue/iosched/ where scheduler
// is active.
func (d Disk) tunablesElsewhere(scheduler string) ([]string, bool) {
	ents, err := os.ReadDir(d.Sys.Path("block"))
	if err != nil {
		return nil, false
	}
	for _, e := range ents {
		q := sysfs.Queue{FS: d.Sys, Disk: e.Name()}
		if e.Name() == d.Queue.Name() {
			continue
		}
		v, err := q.Read(queueattr.Scheduler)
		if err != nil {
			continue
		}
		if l, err := sched.Parse(v); err != nil || l.Active != scheduler {
			continue
		}
		if names, ok := listTunables(q.Path("iosched")); ok {
			return names, true
		}
	}
	return nil, false
}

// listTunables lists the regular files of an iosched/ directory, sorted.
func listTunables(dir string) ([]string, bool) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		return nil, false
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, len(names) > 0
}

// Change is one write a pass made or would make.
type Change struct {
	Attr     string // "scheduler", a queue attribute, "iosched/NAME"
	From, To string // From "" when not read (a tunable before the switch)
	Why      string // what asked for it: the setting's property or argument
}

// Line is one line of a report: a change, or what already holds.
type Line struct {
	Text   string // without the disk name
	Change bool   // a write was (or would be) made
}

// Report is what one pass over a disk found or did.
type Report struct {
	Disk    string
	Lines   []Line // one per scheduler or attribute
	Changes []Change
	Gone    bool // the disk went away: nothing else counts
	Errs    []error
	// settingErrs is each setting's error, by index, for Check.
	settingErrs map[int]error
}

// Changed reports whether the pass wrote (or would write) anything.
func (r Report) Changed() bool { return len(r.Changes) > 0 }

// Text renders the report as the commands print it: one line each,
// "DISK: what", marked "(dry run)" where a dry run would write.
func (r Report) Text(dryRun bool) string {
	var b strings.Builder
	if r.Gone {
		fmt.Fprintf(&b, "%s: went away, nothing done\n", r.Disk)
		return b.String()
	}
	for _, l := range r.Lines {
		t := l.Text
		if dryRun && l.Change {
			t += " (dry run)"
		}
		fmt.Fprintf(&b, "%s: %s\n", r.Disk, t)
	}
	return b.String()
}

// Err joins the report's errors.
func (r Report) Err() error { return errors.Join(r.Errs...) }

// Apply carries out a plan of Check: the scheduler first (a switch
// resets nr_requests and replaces the iosched/ tunables), then each
// setting in order. A failed setting does not stop the others; all
// failures are in the report. A plan with no change is the answer as it
// stands: nothing is read again and no lock is taken. Else the disk's
// lock is taken and the pass runs again, reading again only what it
// will write (everything the policy sets, after a scheduler switch),
// since another run may have written it meanwhile; each write is read
// back once.
func (d Disk) Apply(plan Plan) Report {
	if !plan.Changed() || plan.Gone {
		return plan.Report
	}
	p := plan.Policy
	// One iosched run per disk at a time: 6.18 kernels oops when two
	// writers of queue/scheduler overlap (package disklock says why).
	unlock, err := d.Locks.Lock(d.Queue.Name(), disklock.Wait)
	if errors.Is(err, os.ErrPermission) && !d.anyWritable(p) {
		// Not root, so no lock; but no write can succeed either, so no
		// writers can overlap: the pass reports the file the kernel
		// refuses, as the user expects.
		unlock, err = func() {}, nil
	}
	if err != nil {
		return Report{Disk: d.Queue.Name(), Errs: []error{err}}
	}
	defer unlock()
	m := plan.queue
	if m == nil {
		m = newMemo(d.Queue)
	}
	switched := false
	for _, c := range plan.Changes {
		m.forget(c.Attr)
		switched = switched || c.Attr == queueattr.Scheduler
	}
	if switched {
		for _, s := range p.Settings {
			m.forget(s.Spec.Name)
		}
	}
	d.Queue = m
	return d.pass(p, false)
}

// ApplyRecorded is what udev and apply do for one disk: the policy the
// properties keys record (FromProperties, each read by get) less what
// Check refuses, applied, or with dryRun only checked. Bad input never
// stops good input: each bad property and refused setting is an error,
// and the rest is applied.
func (d Disk) ApplyRecorded(keys []string, get func(string) string, dryRun bool) (Report, []error) {
	p, bad := FromProperties(d.Queue.Name(), keys, get)
	plan := d.Check(p)
	for _, err := range plan.Refused {
		bad = append(bad, fmt.Errorf("%w; skipped", err))
	}
	if dryRun {
		return plan.Report, bad
	}
	return d.Apply(plan), bad
}

// anyWritable reports whether this process may open any file the pass
// would write (access(2) with the effective ids).
func (d Disk) anyWritable(p Policy) bool {
	var paths []string
	if p.Wanted != nil {
		paths = append(paths, d.Queue.Path(queueattr.Scheduler))
	}
	for _, s := range p.Settings {
		paths = append(paths, d.Queue.Path(s.Spec.Name))
	}
	for _, path := range paths {
		if unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS) == nil {
			return true
		}
	}
	return false
}

// LegacyNames are scheduler names of the block layer before blk-mq,
// gone since Linux 5.0, with their successor: the one home of the pair,
// which 60-iosched.rules maps elevator= with (a test holds them in
// step) and a list naming them gets as a hint. ("deadline" still works:
// it is mq-deadline's alias.)
var LegacyNames = map[string]string{"noop": "none", "cfq": "bfq"}

// hint names the legacy names among unavailable, or "".
func hint(unavailable []string) string {
	var h []string
	for _, n := range unavailable {
		if to, ok := LegacyNames[n]; ok {
			h = append(h, fmt.Sprintf("%s: gone since Linux 5.0; %q is its successor", n, to))
		}
	}
	return strings.Join(h, "; ")
}

func (d Disk) pass(p Policy, dryRun bool) Report {
	a := d.apply(dryRun)
	r := Report{Disk: d.Queue.Name(), settingErrs: map[int]error{}}
	gone := func(err error) bool {
		if errors.Is(err, apply.ErrGone) {
			r.Gone, r.Errs, r.Lines = true, nil, nil
			return true
		}
		return false
	}
	schedOK, schedChanged, hintLine := true, false, ""
	after := a // the queue as the settings will find it
	if p.Wanted != nil {
		res, err := a.Scheduler(p.Wanted)
		switch {
		case gone(err):
			return r
		case errors.Is(err, apply.ErrUnavailable) && p.Keep:
			r.Lines = append(r.Lines, Line{Text: fmt.Sprintf("%s kept (unavailable: %s)", res.From, strings.Join(res.Unavailable, ","))})
		case errors.Is(err, apply.ErrUnavailable):
			if h := hint(p.Wanted); h != "" {
				err = fmt.Errorf("%w (%s)", err, h)
			}
			r.Errs = append(r.Errs, err)
			schedOK = false
		case err != nil:
			r.Errs = append(r.Errs, err)
			schedOK = false
		default:
			hintLine = hint(res.Unavailable)
			r.Lines = append(r.Lines, Line{res.String(), res.Changed})
			schedChanged = res.Changed
			if res.Changed {
				r.Changes = append(r.Changes, Change{queueattr.Scheduler, res.From, res.To, p.Source.why()})
			}
		}
		if dryRun && schedChanged {
			after = a.AfterSwitch(res.From, res.To)
		}
	}
	for i, s := range p.Settings {
		if s.Spec.Kind == queueattr.Tunable && (!schedOK || dryRun && schedChanged) {
			if !schedOK {
				r.Errs = append(r.Errs, fmt.Errorf("%s: %s not set: the scheduler was not applied", d.Queue.Name(), s.Spec.Name))
			} else {
				// The new scheduler's tunables exist only after the switch,
				// but what their stores keep depends on the value and the
				// kernel's HZ alone: refused here, before any write.
				if err := s.Spec.Refusal(s.Value, d.kernelOnly()); err != nil {
					err = fmt.Errorf("%s: %w", d.Queue.Name(), err)
					r.Errs = append(r.Errs, err)
					r.settingErrs[i] = err
					continue
				}
				r.Lines = append(r.Lines, Line{fmt.Sprintf("%s -> %s after the switch", s.Spec.Name, s.Value), true})
				r.Changes = append(r.Changes, Change{s.Spec.Name, "", s.Value, s.From})
			}
			continue
		}
		res, err := after.Attr(s.Spec, s.Value)
		switch {
		case gone(err):
			return r
		case err != nil:
			r.Errs = append(r.Errs, err)
			r.settingErrs[i] = err
		default:
			r.Lines = append(r.Lines, Line{res.String(), res.Changed})
			if res.Changed {
				r.Changes = append(r.Changes, Change{s.Spec.Name, res.From, res.To, s.From})
			}
		}
	}
	if hintLine != "" {
		r.Lines = append(r.Lines, Line{Text: "hint: " + hintLine})
	}
	return r
}

// kernelAware answers what no attribute of the queue shows:
// queueattr.KernelHZ from the kernel's configuration (Disk.HZ), and
// queueattr.LoopReadOnly from the loop device's node (loopdev.ReadOnly)
// when node is set; every other read goes to the queue.
type kernelAware struct {
	apply.Queue
	hz   func() (jiffies.HZ, string, error)
	node string
}

func (k kernelAware) Read(attr string) (string, error) {
	if attr == queueattr.KernelHZ {
		return readHZ(k.hz)
	}
	return k.Queue.Read(attr)
}

func readHZ(find func() (jiffies.HZ, string, error)) (string, error) {
	if find == nil {
		return "", jiffies.ErrUnknown
	}
	hz, src, err := find()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d %s", hz, src), nil
}

// kernelOnly reads only what the kernel, not the queue, tells: enough
// for a scheduler's tunables, whose stores depend on nothing else.
func (d Disk) kernelOnly() queueattr.Reader {
	return func(attr string) (string, error) {
		if attr == queueattr.KernelHZ {
			return readHZ(d.HZ)
		}
		return "", fmt.Errorf("%s: %s: %w", d.Queue.Name(), attr, os.ErrNotExist)
	}
}

func (k kernelAware) ReadDisk(attr string) (string, error) {
	if k.node != "" && "../"+attr == queueattr.LoopReadOnly {
		ro, err := loopdev.ReadOnly(k.node)
		if err != nil {
			return "", err
		}
		if ro {
			return "1", nil
		}
		return "0", nil
	}
	if dr, ok := k.Queue.(interface {
		ReadDisk(string) (string, error)
	}); ok {
		return dr.ReadDisk(attr)
	}
	return "", fmt.Errorf("%s: %s: %w", k.Name(), attr, os.ErrNotExist)
}

// memo is a queue read at most once a file: Check plans from what it
// read, and Apply reads again, under the lock, only what it forgets.
// A write forgets what it wrote, so the read back goes to the disk.
type memo struct {
	apply.Queue
	vals map[string]memoVal
}

type memoVal struct {
	v   string
	err error
}

func newMemo(q apply.Queue) *memo {
	if m, ok := q.(*memo); ok {
		return m
	}
	return &memo{Queue: q, vals: map[string]memoVal{}}
}

func (m *memo) Read(attr string) (string, error) {
	if v, ok := m.vals[attr]; ok {
		return v.v, v.err
	}
	v, err := m.Queue.Read(attr)
	m.vals[attr] = memoVal{v, err}
	return v, err
}

func (m *memo) ReadDisk(attr string) (string, error) {
	key := "../" + attr
	if v, ok := m.vals[key]; ok {
		return v.v, v.err
	}
	dr, ok := m.Queue.(interface {
		ReadDisk(string) (string, error)
	})
	if !ok {
		return "", fmt.Errorf("%s: %s: %w", m.Name(), attr, os.ErrNotExist)
	}
	v, err := dr.ReadDisk(attr)
	m.vals[key] = memoVal{v, err}
	return v, err
}

func (m *memo) Write(attr, value string) error {
	m.forget(attr)
	return m.Queue.Write(attr, value)
}

func (m *memo) forget(attr string) { delete(m.vals, attr) }
