package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// lowest is the bottom of the range freeport draws from; below it live
// well-known services (databases, dev servers) a developer may run.
const lowest = 20000

var (
	mu    sync.Mutex
	held  = map[int]*os.File{} // port → its lock, held for the process's life
	tries = 200
)

// TCP returns a loopback port that was free when checked and that no other
// caller of freeport on this machine will return while this process lives.
func TCP() (int, error) {
	lo, hi := span()
	if hi <= lo {
		return kernelPort()
	}
	mu.Lock()
	defer mu.Unlock()
	for range tries {
		port := lo + rand.IntN(hi-lo)
		if _, mine := held[port]; mine {
			continue
		}
		lock, ok := claim(port)
		if !ok {
			continue
		}
		if !bindable(port) {
			_ = lock.Close()
			continue
		}
		held[port] = lock
		return port, nil
	}
	return 0, errors.New("freeport: no free port below the ephemeral range")
}

// Addr is TCP as "127.0.0.1:PORT".
func Addr() (string, error) {
	p, err := TCP()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), nil
}

// span is [lowest, start of the ephemeral range), from the kernel's
// setting where it has one.
func span() (int, int) {
	hi := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				hi = v
			}
		}
	}
	return lowest, hi
}

// claim takes the machine-wide lock file for port; a lock held by a
// process that died is released by the kernel, so ports are never leaked.
func claim(port int) (*os.File, bool) {
	dir := filepath.Join(os.TempDir(), "tenzrod-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, false
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, false
	}
	return f, true
}

// bindable reports whether port is free of anything outside freeport.
func bindable(port int) bool {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// kernelPort is the racy fallback for machines whose ephemeral range
// leaves no room below it.
func kernelPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("freeport: %w", err)
	}
	defer l.Close() //nolint:errcheck // it never accepted; only its port was wanted
	return l.Addr().(*net.TCPAddr).Port, nil
}
