//go:build chaosbroken

package settle

// forgetAfterRestart, in the deliberately broken build only (go build
// -tags chaosbroken, never a flag of the shipped binary), makes a
// restarted gateway's outbox hand its first signed record to the buyer
// without storing or delivering it: a record lost across a restart, which
// the chaos soak's checker must catch (cmd/chaos TestChaosBroken).
func forgetAfterRestart(o *Outbox) bool {
	return o.reopened && o.forgot.CompareAndSwap(false, true)
}
