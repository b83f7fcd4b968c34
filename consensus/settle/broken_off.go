//go:build !chaosbroken

package settle

// forgetAfterRestart is the deliberately broken build's hook (see
// broken_on.go); the shipped outbox keeps every record it signs.
func forgetAfterRestart(*Outbox) bool { return false }
