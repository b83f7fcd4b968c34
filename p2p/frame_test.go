package p2p

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	payloads := [][]byte{
		{},
		[]byte("hello"),
		bytes.Repeat([]byte{0xab}, 127),
		bytes.Repeat([]byte{0xcd}, 128),
		bytes.Repeat([]byte{0x01}, coalesceLimit+1),
		bytes.Repeat([]byte{0x02}, 3*growStep+17),
	}
	var buf bytes.Buffer
	for _, p := range payloads {
		if err := WriteFrame(&buf, p); err != nil {
			t.Fatal(err)
		}
	}
	r := bufio.NewReader(&buf)
	for i, want := range payloads {
		got, err := ReadFrame(r, 1<<20)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("frame %d: got %d bytes, want %d", i, len(got), len(want))
		}
	}
	if _, err := ReadFrame(r, 1<<20); !errors.Is(err, io.EOF) {
		t.Fatalf("after last frame: err = %v, want io.EOF", err)
	}
}

func TestFrameTooLarge(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteFrame(&buf, make([]byte, 1001)); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFrame(bufio.NewReader(&buf), 1000)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want ErrFrameTooLarge", err)
	}
	// Exactly max is fine.
	buf.Reset()
	_ = WriteFrame(&buf, make([]byte, 1000))
	if p, err := ReadFrame(bufio.NewReader(&buf), 1000); err != nil || len(p) != 1000 {
		t.Fatalf("frame of exactly max: len %d err %v", len(p), err)
	}
}

// A header claiming more than max must be refused without allocating it.
func TestFrameOversizeHeaderNoAlloc(t *testing.T) {
	var hdr [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], 32<<20)
	in := append(hdr[:n:n], make([]byte, 100)...)
	r := bufio.NewReader(bytes.NewReader(in))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadFrame(r, 16<<20)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want ErrFrameTooLarge", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Fatalf("allocated %d bytes rejecting an oversize header", got)
	}
	// Headers beyond any int are refused the same way.
	n = binary.PutUvarint(hdr[:], 1<<63)
	if _, err := ReadFrame(bufio.NewReader(bytes.NewReader(hdr[:n])), 1<<20); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("2^63 header: err = %v, want ErrFrameTooLarge", err)
	}
}

func TestFrameTruncatedAndMalformed(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"truncated payload", []byte{5, 'a', 'b'}, io.ErrUnexpectedEOF},
		{"truncated header", []byte{0x80}, io.ErrUnexpectedEOF},
		{"non-minimal", []byte{0x81, 0x00}, errVarint},
		{"overflow", bytes.Repeat([]byte{0xff}, 11), errVarint},
		{"overflow tenth byte", append(bytes.Repeat([]byte{0xff}, 9), 0x02), errVarint},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFrame(bufio.NewReader(bytes.NewReader(tc.in)), 1<<20)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// stallReader serves its bytes and then reports a broken stream, like a peer
// that announced a big frame and went away.
type stallReader struct{ b []byte }

func (s *stallReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, errors.New("stream reset")
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

func TestFrameLargeAnnouncedGrowsWithData(t *testing.T) {
	var hdr [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], 64<<20)
	r := bufio.NewReader(&stallReader{b: append(hdr[:n:n], make([]byte, 1000)...)})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadFrame(r, 128<<20)
	runtime.ReadMemStats(&after)
	if err == nil || errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want the stream error", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Fatalf("allocated %d bytes for a 64 MiB frame that delivered 1000 bytes", got)
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0}, 16)
	f.Add([]byte{3, 'a', 'b', 'c', 1, 'x'}, 3)
	f.Add([]byte{0x80, 0x01}, 200)
	f.Add([]byte{0x81, 0x00}, 200)
	f.Add(bytes.Repeat([]byte{0xff}, 12), 1<<20)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 0 || max > 1<<20 {
			max = 1 << 20
		}
		r := bufio.NewReader(bytes.NewReader(in))
		consumed := 0
		for {
			p, err := ReadFrame(r, max)
			if err != nil {
				if errors.Is(err, io.EOF) && consumed != len(in) {
					t.Fatalf("io.EOF after %d of %d bytes", consumed, len(in))
				}
				return
			}
			if len(p) > max {
				t.Fatalf("frame of %d bytes exceeds max %d", len(p), max)
			}
			// The payload must be the bytes right after a minimal header.
			var re bytes.Buffer
			if err := WriteFrame(&re, p); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(re.Bytes(), in[consumed:consumed+re.Len()]) {
				t.Fatalf("re-encoded frame differs from input at %d", consumed)
			}
			consumed += re.Len()
		}
	})
}

// TestPeekFrameSize: the declared length is read without consuming the
// frame; a short or malformed prefix is -1.
func TestPeekFrameSize(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want int
	}{
		{AppendFrame(nil, []byte("hello")), 5},
		{AppendFrame(nil, make([]byte, 300)), 300},
		{[]byte{0x80}, -1},                   // prefix cut short
		{bytes.Repeat([]byte{0xff}, 11), -1}, // longer than any uvarint
		{nil, -1},
	} {
		r := bufio.NewReader(bytes.NewReader(c.in))
		if got := PeekFrameSize(r); got != c.want {
			t.Errorf("%x: %d, want %d", c.in[:min(len(c.in), 4)], got, c.want)
		}
		if r.Buffered() != len(c.in) && len(c.in) > 0 && c.want >= 0 {
			t.Errorf("%x: peek consumed the frame", c.in[:4])
		}
	}
}
