package devnet

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// handStarted lists the live processes that run a node whose --home is a
// directory directly under dir (a node home of this devnet) and that the
// devnet did not start: a node restarted by hand, the README's way, which
// Ctrl-C of the devnet does not reach. It reads /proc; a process it may
// not read is skipped.
func handStarted(dir string) []handNode {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	// Paths are compared resolved: a process's cwd comes from /proc
	// without symlinks, the devnet's --dir may have them.
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	var found []handNode
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 { // a zombie has an empty command line
			continue
		}
		home := homeArg(strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00"))
		if home == "" {
			continue
		}
		if !filepath.IsAbs(home) {
			cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
			if err != nil {
				continue
			}
			home = filepath.Join(cwd, home)
		}
		if r, err := filepath.EvalSymlinks(home); err == nil {
			home = r
		}
		if filepath.Dir(home) == dir {
			found = append(found, handNode{name: filepath.Base(home), pid: pid})
		}
	}
	return found
}

// homeArg returns the value of a --home flag in args, or "".
func homeArg(args []string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--home="); ok {
			return v
		}
		if a == "--home" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
