package status

import "testing"

func TestWantedText(t *testing.T) {
	empty, list := "", "bfq,none"
	tests := []struct {
		row  Row
		want string
	}{
		{Row{}, "-"},
		{Row{NoUdevDB: true, Note: "udev database not readable"}, "?"},
		{Row{Wanted: &empty}, "(opted out)"},
		{Row{Wanted: &list}, "bfq,none"},
	}
	for _, tt := range tests {
		if got := wantedText(tt.row); got != tt.want {
			t.Errorf("wantedText(%+v) = %q, want %q", tt.row, got, tt.want)
		}
	}
}
