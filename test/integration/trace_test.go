package integration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseTrace holds the strace reader to the lines strace writes under
// load, and to its refusal of a system call it does not know.
func TestParseTrace(t *testing.T) {
	for _, tc := range []struct {
		name, trace string
		want        []string // openCall.Path of each call read
		wantErr     bool
	}{
		{
			name:  "plain and split calls",
			trace: "1 openat(AT_FDCWD, \"/a\", O_RDONLY) = 3\n2 openat(AT_FDCWD, \"/b\", O_WRONLY <unfinished ...>\n1 +++ exited with 0 +++\n2 <... openat resumed>) = 4\n",
			want:  []string{"/a", "/b"},
		},
		{
			name:  "threads strace could not decode",
			trace: "1 openat(AT_FDCWD, \"/a\", O_RDONLY) = 3\n5 ???( <unfinished ...>\n6 ???( <detached ...>\n5 <... ??? resumed>) = 0\n",
			want:  []string{"/a"},
		},
		{
			name:    "an unknown system call",
			trace:   "1 frobnicate(\"/a\") = 0\n",
			wantErr: true,
		},
		{
			name:    "a resumption of nothing",
			trace:   "1 <... openat resumed>) = 0\n",
			wantErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := parseTrace(tc.trace)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseTrace(%q) error = %v, want error %v", tc.trace, err, tc.wantErr)
			}
			var got []string
			for _, c := range calls {
				got = append(got, c.Path)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseTrace(%q) paths (-want +got):\n%s", tc.trace, diff)
			}
		})
	}
}
