package llm

// KernelSets names every kernel set this machine runs, the pure-Go
// reference last.
func KernelSets() []string {
	var names []string
	for _, k := range allKernels() {
		names = append(names, k.name)
	}
	return names
}

// UseKernels switches to the named kernel set and returns a function that
// switches back. Tests that use it must not run in parallel.
func UseKernels(name string) (restore func()) {
	old := kern
	for _, k := range allKernels() {
		if k.name == name {
			kern = k
		}
	}
	return func() { kern = old }
}

// LogSoftmax64 is the float64 log-softmax ReferenceScore uses.
func LogSoftmax64(x []float64) []float64 { return logSoftmax64(x) }

// CommonPrefix is the prefix cache's measure of what two token sequences
// share.
func CommonPrefix(a, b []int) int { return commonPrefix(a, b) }
