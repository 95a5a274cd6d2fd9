package apply

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/iosched/iosched/helper/sched"
)

// kernel models what block/elevator.c does with queue/scheduler, so the
// decision logic is tested without a kernel; test/integration and the VM
// tests run the same code against real ones.
type kernel struct {
	active     string
	registered []string        // elv_list, in order
	modules    map[string]bool // names request_module() can load
	writes     []string        // every write(2), in order
	busy       int             // the next n writes fail with EBUSY
	whileBusy  func(k *kernel) // runs on each EBUSY: another writer
	readErr    error
	writeErr   error
	ignore     bool // writes succeed but change nothing (a racing writer)
}

func (k *kernel) Name() string            { return "sdx" }
func (k *kernel) Path(attr string) string { return "/sys/block/sdx/queue/" + attr }

func (k *kernel) Read(attr string) (string, error) {
	if k.readErr != nil {
		return "", k.readErr
	}
	var b strings.Builder
	for _, n := range append([]string{"none"}, k.registered...) {
		if n == k.active {
			fmt.Fprintf(&b, "[%s] ", n)
		} else {
			fmt.Fprintf(&b, "%s ", n)
		}
	}
	return strings.TrimSpace(b.String()), nil
}

func (k *kernel) Write(attr, v string) error {
	k.writes = append(k.writes, v)
	if k.writeErr != nil {
		return k.writeErr
	}
	if k.busy > 0 {
		k.busy--
		if k.whileBusy != nil {
			k.whileBusy(k)
		}
		return syscall.EBUSY
	}
	name := sched.Effective(v)
	if k.modules[name] {
		k.registered = append(k.registered, name)
		delete(k.modules, name)
	}
	if k.ignore {
		return nil
	}
	if sched.IsNone(name) {
		k.active = "none"
		return nil
	}
	l, _ := sched.Parse("[none] " + strings.Join(k.registered, " "))
	e, ok := l.Offers(name)
	if !ok {
		return syscall.EINVAL
	}
	k.active = e
	return nil
}

func TestScheduler(t *testing.T) {
	all := []string{"mq-deadline", "kyber", "bfq"}
	tests := []struct {
		name       string
		k          kernel
		wanted     []string
		dryRun     bool
		want       Result
		wantWrites []string
		wantActive string
		wantErr    error
		manyWrites bool // bounded retries: more than one write, fewer than 100
	}{
		{name: "none unchanged", k: kernel{active: "none", registered: all}, wanted: []string{"none"},
			want: Result{From: "none", To: "none"}, wantActive: "none"},
		{name: "mq-deadline unchanged", k: kernel{active: "mq-deadline", registered: all}, wanted: []string{"mq-deadline"},
			want: Result{From: "mq-deadline", To: "mq-deadline"}, wantActive: "mq-deadline"},
		{name: "alias unchanged", k: kernel{active: "mq-deadline", registered: all}, wanted: []string{"deadline"},
			want: Result{From: "mq-deadline", To: "mq-deadline"}, wantActive: "mq-deadline"},
		{name: "change", k: kernel{active: "none", registered: all}, wanted: []string{"kyber"},
			want: Result{From: "none", To: "kyber", Changed: true}, wantWrites: []string{"kyber"}, wantActive: "kyber"},
		{name: "change by alias writes the real name", k: kernel{active: "none", registered: all}, wanted: []string{"deadline"},
			want: Result{From: "none", To: "mq-deadline", Changed: true}, wantWrites: []string{"mq-deadline"}, wantActive: "mq-deadline"},
		{name: "to none", k: kernel{active: "bfq", registered: all}, wanted: []string{"none"},
			want: Result{From: "bfq", To: "none", Changed: true}, wantWrites: []string{"none"}, wantActive: "none"},
		{name: "first unavailable, second active", k: kernel{active: "mq-deadline", registered: []string{"mq-deadline"}},
			wanted: []string{"bfq", "mq-deadline"},
			want:   Result{From: "mq-deadline", To: "mq-deadline", Unavailable: []string{"bfq"}}, wantActive: "mq-deadline"},
		{name: "first loadable as module", k: kernel{active: "mq-deadline", registered: []string{"mq-deadline"}, modules: map[string]bool{"bfq": true}},
			wanted: []string{"bfq", "mq-deadline"},
			want:   Result{From: "mq-deadline", To: "bfq", Changed: true}, wantWrites: []string{"bfq"}, wantActive: "bfq"},
		{name: "module index says yes, kernel says EINVAL", k: kernel{active: "none", registered: []string{"kyber"}, modules: map[string]bool{}},
			wanted: []string{"bfq", "kyber"},
			want:   Result{From: "none", To: "kyber", Changed: true, Unavailable: []string{"bfq"}}, wantWrites: []string{"bfq", "kyber"}, wantActive: "kyber"},
		{name: "nothing usable", k: kernel{active: "none", registered: []string{"mq-deadline"}}, wanted: []string{"bfq", "kyber"},
			want: Result{From: "none", To: "none", Unavailable: []string{"bfq", "kyber"}}, wantActive: "none", wantErr: ErrUnavailable},
		{name: "dry run", k: kernel{active: "none", registered: all}, wanted: []string{"bfq"}, dryRun: true,
			want: Result{From: "none", To: "bfq", Changed: true}, wantActive: "none"},
		{name: "busy twice", k: kernel{active: "none", registered: all, busy: 2}, wanted: []string{"bfq"},
			want: Result{From: "none", To: "bfq", Changed: true}, wantWrites: []string{"bfq", "bfq", "bfq"}, wantActive: "bfq"},
		{name: "busy forever", k: kernel{active: "none", registered: all, busy: 1 << 30}, wanted: []string{"bfq"},
			want: Result{From: "none", To: "none"}, wantActive: "none", wantErr: syscall.EBUSY, manyWrites: true},
		{name: "busy, then the other writer did our work", k: kernel{active: "none", registered: all, busy: 1,
			whileBusy: func(k *kernel) { k.active = "bfq" }}, wanted: []string{"bfq"},
			want: Result{From: "none", To: "bfq", Changed: true}, wantWrites: []string{"bfq"}, wantActive: "bfq"},
		{name: "gone before read", k: kernel{readErr: syscall.ENODEV}, wanted: []string{"bfq"}, wantErr: ErrGone},
		{name: "gone before write", k: kernel{active: "none", registered: all, writeErr: syscall.ENOENT}, wanted: []string{"bfq"},
			want: Result{From: "none", To: "none"}, wantWrites: []string{"bfq"}, wantActive: "none", wantErr: ErrGone},
		{name: "permission denied", k: kernel{active: "none", registered: all, writeErr: syscall.EACCES}, wanted: []string{"bfq"},
			want: Result{From: "none", To: "none"}, wantWrites: []string{"bfq"}, wantActive: "none", wantErr: syscall.EACCES},
		{name: "read-only", k: kernel{active: "none", registered: all, writeErr: syscall.EROFS}, wanted: []string{"bfq"},
			want: Result{From: "none", To: "none"}, wantWrites: []string{"bfq"}, wantActive: "none", wantErr: syscall.EROFS},
		{name: "write ignored", k: kernel{active: "none", registered: all, ignore: true}, wanted: []string{"bfq"},
			want: Result{From: "none", To: "none"}, wantWrites: []string{"bfq"}, wantActive: "none", wantErr: ErrNotApplied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := tt.k
			var slept time.Duration
			d := Disk{
				Queue:    &k,
				DryRun:   tt.dryRun,
				Loadable: func(n string) (bool, error) { _, ok := k.modules[n]; return ok || k.modules != nil && n == "bfq", nil },
				BusyFor:  time.Second,
				Sleep:    func(p time.Duration) { slept += p },
			}
			got, err := d.Scheduler(tt.wanted)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("Scheduler(%q) error = %v, want %v", tt.wanted, err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "sdx") {
				t.Errorf("error %q does not name the disk", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Scheduler(%q) result (-want +got):\n%s", tt.wanted, diff)
			}
			if tt.manyWrites {
				if n := len(k.writes); n < 2 || n > 100 {
					t.Errorf("%d writes, want 2..100 bounded retries", n)
				}
			} else if diff := cmp.Diff(tt.wantWrites, k.writes); diff != "" {
				t.Errorf("Scheduler(%q) writes (-want +got):\n%s", tt.wanted, diff)
			}
			if k.active != tt.wantActive {
				t.Errorf("active after = %q, want %q", k.active, tt.wantActive)
			}
			if slept > 2*time.Second {
				t.Errorf("slept %v, more than the busy bound", slept)
			}
		})
	}
}
