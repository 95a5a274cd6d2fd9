package queueattr

import (
	"os"
	"regexp"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunRuleKnowsEveryName keeps 99-iosched-run.rules in step with this
// package: the rule starts the helper for a disk that has any attribute
// or tunable property, and it can only test names it lists.
func TestRunRuleKnowsEveryName(t *testing.T) {
	b, err := os.ReadFile("../../rules.d/99-iosched-run.rules")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^ENV\{IOSCHED_(ATTR|TUNE)_([a-z0-9_]+)\}=="\?\*", GOTO="iosched_run"$`)
	got := map[string][]string{}
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		got[m[1]] = append(got[m[1]], m[2])
	}
	var tunes []string
	seen := map[string]bool{}
	for _, names := range Tunables {
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				tunes = append(tunes, n)
			}
		}
	}
	sort.Strings(tunes)
	want := map[string][]string{"ATTR": Names(), "TUNE": tunes}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("99-iosched-run.rules lists (-want +got):\n%s", diff)
	}
}
