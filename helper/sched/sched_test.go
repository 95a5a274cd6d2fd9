package sched

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Line
		wantErr bool
	}{
		// elv_iosched_show(), block/elevator.c:847-860: "none" first,
		// then elv_list in registration order, each followed by a space.
		{in: "[none] mq-deadline kyber bfq \n", want: Line{Active: "none", Offered: []string{"none", "mq-deadline", "kyber", "bfq"}}},
		{in: "none [mq-deadline] kyber bfq \n", want: Line{Active: "mq-deadline", Offered: []string{"none", "mq-deadline", "kyber", "bfq"}}},
		{in: "none mq-deadline kyber [bfq] \n", want: Line{Active: "bfq", Offered: []string{"none", "mq-deadline", "kyber", "bfq"}}},
		{in: "[none] \n", want: Line{Active: "none", Offered: []string{"none"}}},
		{in: "none mq-deadline\n", wantErr: true},
		{in: "", wantErr: true},
		{in: "[] none\n", wantErr: true},
		{in: "[none] [bfq]\n", wantErr: true},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("Parse(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestEffective(t *testing.T) {
	// strscpy(elevator_name, buf, ELV_NAME_MAX) then strstrip(),
	// block/elevator.c:804-805.
	tests := []struct{ in, want string }{
		{"mq-deadline", "mq-deadline"},
		{"mq-deadline\n", "mq-deadline"}, // echo adds a newline
		{"  kyber\t\n", "kyber"},
		{"\v\fbfq\r", "bfq"},
		{"bfq\x00junk", "bfq"},                    // strscpy stops at NUL
		{"0123456789abcdefgh", "0123456789abcde"}, // 15 bytes kept
		{strings.Repeat(" ", 15) + "bfq", ""},     // cut before strip
		{"          bfq   x", "bfq"},              // cut to "          bfq  "
		{"mq-deadline-extra", "mq-deadline-ext"},  // a long name is cut, not refused
		{"none\n", "none"},
	}
	for _, tt := range tests {
		if got := Effective(tt.in); got != tt.want {
			t.Errorf("Effective(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMatches(t *testing.T) {
	tests := []struct {
		active, want string
		match        bool
	}{
		{"none", "none", true},
		{"none", "none\n", true},
		// strncmp(name, "none", 4), block/elevator.c:570 and 661.
		{"none", "nonexistent", true},
		{"none", "mq-deadline", false},
		{"mq-deadline", "mq-deadline", true},
		// elevator_match(): name or alias, block/elevator.c:93-97.
		{"mq-deadline", "deadline", true},
		{"mq-deadline", " deadline\n", true},
		{"mq-deadline", "none", false},
		{"mq-deadline", "kyber", false},
		{"kyber", "kyber", true},
		{"kyber", "deadline", false},
		{"bfq", "bfq", true},
		{"bfq", "bfq-iosched", false},
		{"bfq", "BFQ", false}, // strcmp is case-sensitive
	}
	for _, tt := range tests {
		if got := Matches(tt.active, tt.want); got != tt.match {
			t.Errorf("Matches(%q, %q) = %v, want %v", tt.active, tt.want, got, tt.match)
		}
	}
}

func TestOffers(t *testing.T) {
	l := Line{Active: "none", Offered: []string{"none", "mq-deadline", "kyber"}}
	tests := []struct {
		want, name string
		ok         bool
	}{
		{"kyber", "kyber", true},
		{"deadline", "mq-deadline", true},
		{"none", "none", true},
		{"bfq", "", false},
		{"mq", "", false},
	}
	for _, tt := range tests {
		name, ok := l.Offers(tt.want)
		if name != tt.name || ok != tt.ok {
			t.Errorf("Offers(%q) = %q, %v, want %q, %v", tt.want, name, ok, tt.name, tt.ok)
		}
	}
}

func TestParseList(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "mq-deadline", want: []string{"mq-deadline"}},
		{in: "bfq,mq-deadline,none", want: []string{"bfq", "mq-deadline", "none"}},
		{in: " kyber , none ", want: []string{"kyber", "none"}},
		{in: "my_sched-2", want: []string{"my_sched-2"}},
		{in: "", wantErr: true},
		{in: "bfq,,none", wantErr: true},
		{in: "bfq,", wantErr: true},
		{in: "BFQ", wantErr: true},
		{in: "bfq none", wantErr: true},
		{in: "../bfq", wantErr: true},
		{in: "bfq\nnone", wantErr: true},
		{in: "0123456789abcdef", wantErr: true}, // 16 bytes: the kernel would cut it
		{in: "0123456789abcde", want: []string{"0123456789abcde"}},
	}
	for _, tt := range tests {
		got, err := ParseList(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseList(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if err != nil && !errors.Is(err, ErrBadName) {
			t.Errorf("ParseList(%q) error %v is not ErrBadName", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseList(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"[none] mq-deadline kyber bfq \n", "none [bfq]\n", "[", "[]", "[[x]]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		if err != nil {
			return
		}
		if l.Active == "" || strings.ContainsAny(l.Active, " \t\n") {
			t.Fatalf("Parse(%q) active = %q", s, l.Active)
		}
		found := false
		for _, o := range l.Offered {
			found = found || o == l.Active
		}
		if !found {
			t.Fatalf("Parse(%q): active %q not among offered %q", s, l.Active, l.Offered)
		}
	})
}

func FuzzParseList(f *testing.F) {
	f.Add("bfq,mq-deadline,none")
	f.Add(" kyber ")
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ParseList(s)
		if err != nil {
			return
		}
		for _, n := range names {
			// Whatever passes reaches the kernel unchanged.
			if Effective(n) != n {
				t.Fatalf("ParseList(%q) let %q through, kernel reads %q", s, n, Effective(n))
			}
		}
	})
}
