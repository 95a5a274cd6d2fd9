//go:build !cgo

package main

func touchLibudev() {}
