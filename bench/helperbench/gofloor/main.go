// Command gofloor is what helperbench times as the floor of a Go process
// on the machine, built static (CGO_ENABLED=0) like iosched-static and with
// cgo and libudev like iosched. Without arguments it does nothing; with a
// file it prints the file, like cat: the least any Go helper does.
package main

import "os"

func main() {
	touchLibudev()
	if len(os.Args) < 2 {
		return
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.Write(b)
}
