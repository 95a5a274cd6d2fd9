// Command genrules writes rules.d/99-iosched-run.rules and the attribute
// list of the bash completion from package queueattr: go generate
// ./helper/queueattr.
package main

import (
	"fmt"
	"os"

	"github.com/iosched/iosched/helper/queueattr"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: genrules RULES-FILE COMPLETION-FILE")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], queueattr.RunRules(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "genrules: %v\n", err)
		os.Exit(1)
	}
	script, err := os.ReadFile(os.Args[2])
	if err == nil {
		script, err = queueattr.SetCompletionLine(script)
	}
	if err == nil {
		err = os.WriteFile(os.Args[2], script, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "genrules: %v\n", err)
		os.Exit(1)
	}
}
