//go:build !amd64 && !arm64

package llm

// archKernels: no assembly kernels on this architecture.
func archKernels() []kernelSet { return nil }

// archExp: no vector exp on this architecture.
func archExp(x []float64) { pureExp(x) }
