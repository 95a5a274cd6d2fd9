package main

import (
	"errors"
	"os"

	"github.com/iosched/iosched/helper/probe"
	"github.com/iosched/iosched/helper/queueattr"
)

func cmdProbe(e env, args []string) error {
	fs := newFlagSet("probe")
	runs := fs.Int("runs", 10, "unchanged writes per attribute (median reported)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *runs < 1 || *runs > 1000 {
		return usagef("probe takes only --runs N (1 to 1000)")
	}
	if e.geteuid() != 0 {
		return errors.New("probe needs root: it attaches a loop device and writes its queue attributes")
	}
	rep, err := probe.Run(e.sys, e.locks, os.TempDir(), *runs)
	if err != nil {
		return err
	}
	ks, err := queueattr.Measured()
	if err != nil {
		return err
	}
	return rep.Write(e.stdout, ks)
}
