// The GODEBUG defaults of the Go version go.mod names, also when a
// distribution builds without go.mod (Debian's dh-golang, GOPATH mode),
// where they would otherwise be Go 1.20's.

//go:debug default=go1.26
package main
