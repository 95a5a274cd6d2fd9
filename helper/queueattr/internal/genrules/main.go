// Command genrules writes rules.d/99-iosched-run.rules from package
// queueattr: go generate ./helper/queueattr.
package main

import (
	"fmt"
	"os"

	"github.com/iosched/iosched/helper/queueattr"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genrules FILE")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], queueattr.RunRules(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "genrules: %v\n", err)
		os.Exit(1)
	}
}
