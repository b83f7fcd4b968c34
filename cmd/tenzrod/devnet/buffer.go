package devnet

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer that a child's output goroutine may write
// while another goroutine reads it: the devnet's out and each node's log are
// written by os/exec's copier, and the chaos soak and the tests watch them.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
