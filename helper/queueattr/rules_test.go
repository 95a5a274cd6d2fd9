package queueattr

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunRulesUpToDate fails when 99-iosched-run.rules was edited by hand
// or a setting was added here without `go generate ./helper/queueattr`.
func TestRunRulesUpToDate(t *testing.T) {
	got, err := os.ReadFile("../../" + RunRulesPath)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(RunRules()), string(got)); diff != "" {
		t.Errorf("%s is not what go generate ./helper/queueattr writes (-want +got):\n%s", RunRulesPath, diff)
	}
}
