package policy

import (
	"fmt"
	"strings"

	"github.com/iosched/iosched/helper/queueattr"
)

// ListFor returns disk's scheduler list: its entry of the kernel command
// line's iosched.scheduler=ENTRY[/ENTRY...] (cmdline), where an entry is
// DISK:LIST for one disk or LIST for every disk not named, else list,
// the one the rules recorded. The lists are checked later, with the
// rest of the policy; a malformed cmdline is an error, and list stands.
func ListFor(disk, list, cmdline string) (string, error) {
	if cmdline == "" {
		return list, nil
	}
	mine, all, found := "", "", false
	for _, e := range strings.Split(cmdline, "/") {
		name, l, perDisk := strings.Cut(e, ":")
		switch {
		case e == "" || perDisk && (name == "" || l == ""):
			return list, fmt.Errorf("%s=%q: want ENTRY[/ENTRY...], an entry DISK:LIST or LIST", queueattr.CmdlineProperty, cmdline)
		case !perDisk:
			all = e
		case name == disk && !found:
			mine, found = l, true
		}
	}
	switch {
	case found:
		return mine, nil
	case all != "":
		return all, nil
	}
	return list, nil
}
