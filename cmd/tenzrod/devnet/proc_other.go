//go:build !linux

package devnet

import "syscall"

// childAttrs puts each child in its own process group; platforms other
// than Linux have no parent-death signal, so only a clean stop reaps them.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
