package rulesaudit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiff(t *testing.T) {
	lines := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "l%d\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name, a, b, want string
	}{
		{"equal", "x\n", "x\n", ""},
		{"new file", "", "a\nb\n", "--- A\n+++ B\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"one line changed", lines(3), "l1\nL2\nl3\n", "--- A\n+++ B\n@@ -1,3 +1,3 @@\n l1\n-l2\n+L2\n l3\n"},
		{"two hunks", lines(20), strings.Replace(strings.Replace(lines(20), "l2\n", "", 1), "l18\n", "l18\nnew\n", 1),
			"--- A\n+++ B\n@@ -1,5 +1,4 @@\n l1\n-l2\n l3\n l4\n l5\n@@ -16,5 +15,6 @@\n l16\n l17\n l18\n+new\n l19\n l20\n"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Diff("A", "B", tt.a, tt.b)); diff != "" {
			t.Errorf("%s: Diff (-want +got):\n%s", tt.name, diff)
		}
	}
}
