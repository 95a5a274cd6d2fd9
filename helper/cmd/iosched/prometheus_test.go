package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/iosched/iosched/helper/internal/fixture"
)

// sample is one parsed series: its labels in order and its value.
type sample struct {
	Labels string
	Value  float64
}

// TestStatusPrometheus parses the output with the Prometheus text parser
// (legacy metric and label names, the strictest scheme) and compares
// every family, its type and help, and every series.
func TestStatusPrometheus(t *testing.T) {
	disks := fixture.Standard()
	disks[0].Name = `sd"a` // not a kernel name, but it must still come out escaped
	disks[0].Partitions = nil
	sys := fixture.New(t, disks...)
	for _, q := range []string{"0", "1", "2", "3"} {
		if err := os.MkdirAll(filepath.Join(string(sys), "block/nvme0n1/mq", q), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(string(sys), "block/loop0/mq/0"), 0o755); err != nil {
		t.Fatal(err)
	}
	db := map[string]string{
		`sd"a/IOSCHED_SCHEDULER`:           "bfq,mq-deadline",
		"nvme0n1/IOSCHED_SCHEDULER":        "none",
		"loop0/IOSCHED_ATTR_read_ahead_kb": "128",
		// Not UTF-8, with a newline: from a broken or hostile database.
		"zram0/IOSCHED_SCHEDULER": "bfq\xff\n\x1b[2J",
	}
	got, changed := runIn(t, sys, nil, db, "status", "--format=prometheus")
	if got.Code != 0 || changed {
		t.Fatalf("status --format=prometheus: exit %d, changed %v, stderr %q", got.Code, changed, got.Stderr)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	families, err := p.TextToMetricFamilies(strings.NewReader(got.Stdout))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, got.Stdout)
	}
	type family struct {
		Type    string
		HasHelp bool
		Samples []sample
	}
	gotFamilies := map[string]family{}
	for name, mf := range families {
		f := family{Type: mf.GetType().String(), HasHelp: mf.GetHelp() != ""}
		for _, m := range mf.GetMetric() {
			f.Samples = append(f.Samples, sample{labelString(m.GetLabel()), m.GetGauge().GetValue()})
		}
		gotFamilies[name] = f
	}
	gauge := func(s ...sample) family { return family{Type: "GAUGE", HasHelp: true, Samples: s} }
	want := map[string]family{
		"iosched_disk_info": gauge(
			sample{`device=loop0 scheduler=none wanted=`, 1},
			sample{`device=nvme0n1 scheduler=none wanted=none`, 1},
			sample{`device=sd"a scheduler=mq-deadline wanted=bfq,mq-deadline`, 1},
			sample{"device=zram0 scheduler= wanted=bfq\uFFFD\n\x1b[2J", 1}),
		"iosched_policy_holds": gauge(
			sample{"device=loop0", 1},
			sample{"device=nvme0n1", 1},
			sample{`device=sd"a`, 0}),
		"iosched_rotational": gauge(
			sample{"device=loop0", 0},
			sample{"device=nvme0n1", 0},
			sample{`device=sd"a`, 1},
			sample{"device=zram0", 0}),
		"iosched_hardware_queues": gauge(
			sample{"device=loop0", 1},
			sample{"device=nvme0n1", 4}),
	}
	if diff := cmp.Diff(want, gotFamilies); diff != "" {
		t.Errorf("status --format=prometheus (-want +got):\n%s\n%s", diff, got.Stdout)
	}
}

// labelString renders labels as name=value pairs sorted by name.
func labelString(labels []*dto.LabelPair) string {
	var l []string
	for _, p := range labels {
		l = append(l, p.GetName()+"="+p.GetValue())
	}
	sort.Strings(l)
	return strings.Join(l, " ")
}
