package devnet

import "syscall"

// childAttrs puts each child in its own process group, so a terminal's
// Ctrl-C reaches only the devnet (which stops the children in order), and
// asks the kernel to SIGTERM the child if the devnet dies without cleaning up.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
