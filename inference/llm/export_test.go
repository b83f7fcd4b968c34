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
