package netlab

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// Do runs fn on an OS thread switched into namespace ns. A socket fn
// opens stays in ns once made, whichever thread later uses it; that is
// how a test outside reaches a node inside without linking the two.
func Do(ns string, fn func() error) error {
	target, err := os.Open("/var/run/netns/" + ns)
	if err != nil {
		return fmt.Errorf("netlab: %w", err)
	}
	defer func() { _ = target.Close() }() // read-only: nothing to flush
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("netlab: %w", err)
			return
		}
		defer func() { _ = self.Close() }()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("netlab: setns %s: %w", ns, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			// The thread stays locked, so the runtime ends it with this
			// goroutine rather than reuse it in the wrong namespace.
			errc <- fmt.Errorf("netlab: setns back from %s: %w", ns, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// In is fn's result, run on a thread inside namespace ns (see Do).
func In[T any](ns string, fn func() (T, error)) (T, error) {
	var v T
	err := Do(ns, func() error {
		var err error
		v, err = fn()
		return err
	})
	return v, err
}

// DialContext dials addr on network from inside namespace ns.
func DialContext(ctx context.Context, ns, network, addr string) (net.Conn, error) {
	c, err := In(ns, func() (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, network, addr) })
	if err != nil {
		return nil, fmt.Errorf("netlab: dial %s in %s: %w", addr, ns, err)
	}
	return c, nil
}

// HTTPClient is a client whose connections are opened inside ns: what a
// test uses to call a node's API listening on an address of ns only.
func HTTPClient(ns string) *http.Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return DialContext(ctx, ns, network, addr)
		},
		DisableKeepAlives: true,
	}
	return &http.Client{Transport: tr}
}

// Command is argv run inside namespace ns (`ip netns exec`).
func Command(ns string, argv ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...)
}
