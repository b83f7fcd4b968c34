package p2p

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrFrameTooLarge is returned (wrapped) by ReadFrame when a frame's declared
// length exceeds the caller's limit. The stream is then out of sync and must
// be reset.
var ErrFrameTooLarge = errors.New("p2p: frame too large")

// errVarint marks a malformed length prefix.
var errVarint = errors.New("p2p: malformed frame length")

// coalesceLimit is the largest payload WriteFrame copies next to its length
// prefix so both go out in one Write (one muxer frame, usually one packet).
// Larger payloads are written after the prefix without copying.
const coalesceLimit = 16 << 10

// growStep bounds the first allocation of a large frame: ReadFrame grows its
// buffer as bytes actually arrive, so a peer announcing a large frame and then
// stalling does not pin the whole announced size.
const growStep = 64 << 10

// WriteFrame writes one frame: the payload length as an unsigned varint
// (minimal encoding, as in go-msgio / multiformats varint) followed by the
// payload. An empty payload is a valid frame.
func WriteFrame(w io.Writer, payload []byte) error {
	if len(payload) <= coalesceLimit {
		buf := AppendFrame(make([]byte, 0, binary.MaxVarintLen64+len(payload)), payload)
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("p2p: write frame: %w", err)
		}
		return nil
	}
	var hdr [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(len(payload)))
	if _, err := w.Write(hdr[:n]); err != nil {
		return fmt.Errorf("p2p: write frame: %w", err)
	}
	if _, err := w.Write(payload); err != nil {
		return fmt.Errorf("p2p: write frame: %w", err)
	}
	return nil
}

// AppendFrame appends payload to dst as one frame, as WriteFrame writes it:
// several frames built this way go out in one Write.
func AppendFrame(dst, payload []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(payload)))
	return append(dst, payload...)
}

// ReadFrame reads one frame written by WriteFrame. Keep one bufio.Reader per
// stream and pass it to every call: the reader may buffer bytes of the next
// frame.
//
// A frame longer than max fails with an error wrapping ErrFrameTooLarge before
// any payload is read; ReadFrame never allocates more than max bytes for a
// frame. A clean end of stream before the first byte of a frame returns
// io.EOF itself (unwrapped) so callers can tell "no more frames" from
// truncation, which returns an error wrapping io.ErrUnexpectedEOF. Length
// prefixes that are not minimally encoded or overflow 64 bits are rejected.
func ReadFrame(r *bufio.Reader, max int) ([]byte, error) {
	if max < 0 {
		return nil, fmt.Errorf("p2p: read frame: negative limit %d", max)
	}
	size, err := readUvarint(r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("p2p: read frame: %w", err)
	}
	if size > uint64(max) {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, size, max)
	}
	n := int(size)
	if n <= growStep {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, fmt.Errorf("p2p: read frame: %w", unexpected(err))
		}
		return buf, nil
	}
	buf := make([]byte, 0, growStep)
	for len(buf) < n {
		if len(buf) == cap(buf) {
			next := make([]byte, len(buf), min(n, 2*cap(buf)))
			copy(next, buf)
			buf = next
		}
		m, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return nil, fmt.Errorf("p2p: read frame: %w", unexpected(err))
		}
	}
	return buf, nil
}

// readUvarint reads a minimally encoded unsigned varint. It returns io.EOF
// only when the stream ends before the first byte.
func readUvarint(r io.ByteReader) (uint64, error) {
	var x uint64
	var s uint
	for i := 0; i < binary.MaxVarintLen64; i++ {
		b, err := r.ReadByte()
		if err != nil {
			if i > 0 && errors.Is(err, io.EOF) {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				return 0, fmt.Errorf("%w: overflows 64 bits", errVarint)
			}
			if b == 0 && i > 0 {
				return 0, fmt.Errorf("%w: not minimally encoded", errVarint)
			}
			return x | uint64(b)<<s, nil
		}
		x |= uint64(b&0x7f) << s
		s += 7
	}
	return 0, fmt.Errorf("%w: overflows 64 bits", errVarint)
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// PeekFrameSize returns the declared length of r's next frame without
// consuming it, or -1 if the prefix cannot be read or is malformed
// (ReadFrame then reports the problem): a stream handler reserves memory
// for the frame before reading it.
func PeekFrameSize(r *bufio.Reader) int {
	for n := 1; n <= binary.MaxVarintLen64; n++ {
		hdr, err := r.Peek(n)
		if err != nil {
			return -1
		}
		if hdr[n-1] < 0x80 {
			v, k := binary.Uvarint(hdr)
			if k <= 0 || v > uint64(1<<40) {
				return -1
			}
			return int(v)
		}
	}
	return -1
}
