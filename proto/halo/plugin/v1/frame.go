package pluginv1

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/protobuf/proto"
)

// The framing of the calls socket (plugin.proto, "The calls socket"): a 4-byte big-endian
// length, then that many bytes. Host and SDK share it from here, as they share the messages.

const (
	// CallsSocketAcceptTimeout is how long a plugin waits for the host to connect to a
	// calls socket and send the secret; CallsSocketAnswerTimeout how long the host waits for
	// the plugin's answer to the secret before it uses the Calls stream instead.
	CallsSocketAcceptTimeout = 10 * time.Second
	CallsSocketAnswerTimeout = 5 * time.Second

	// MaxSecretFrame is the largest first frame a plugin reads: a secret is 64 bytes.
	MaxSecretFrame = 256
)

// A FrameTooLargeError is a frame whose length is over the reader's limit. Nothing of it was
// read past its length.
type FrameTooLargeError struct{ Size, Limit int }

func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("a frame of %d bytes, over the limit of %d", e.Size, e.Limit)
}

// AppendFrame appends m, framed, to dst.
func AppendFrame(dst []byte, m proto.Message) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, err := proto.MarshalOptions{}.MarshalAppend(dst, m)
	if err != nil {
		return dst[:start], err
	}
	n := len(dst) - start - 4
	if uint64(n) > 1<<32-1 {
		return dst[:start], errors.New("a message over 4 GiB cannot be framed")
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(n))
	return dst, nil
}

// KeepBuffer is the largest buffer a reader or writer of frames keeps from one message to the
// next: a larger message's goes back to the collector rather than stay with the connection.
const KeepBuffer = 256 << 10

// A FrameWriter writes messages as frames, through a buffer it keeps between them. It is not
// safe for concurrent use.
type FrameWriter struct{ buf []byte }

// A WriteError is a frame that could not be written, in part or at all: the stream it went
// to can no longer be read right.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return "writing a frame: " + e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// Write writes m to w as one frame. An error that is not a *WriteError is a message that
// could not be encoded; nothing was written.
func (fw *FrameWriter) Write(w io.Writer, m proto.Message) error {
	b, err := AppendFrame(fw.buf[:0], m)
	if err != nil {
		return err
	}
	if cap(b) <= KeepBuffer {
		fw.buf = b
	}
	if _, err := w.Write(b); err != nil {
		return &WriteError{Err: err}
	}
	return nil
}

// AppendRawFrame appends b, framed, to dst.
func AppendRawFrame(dst, b []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// ReadFrame reads one frame from r into buf (grown when too small) and returns its bytes. A
// frame over limit bytes (limit < 0: no limit) is a *FrameTooLargeError; a stream that ends
// inside a frame is io.ErrUnexpectedEOF, and one that ends between frames io.EOF.
func ReadFrame(r *bufio.Reader, buf []byte, limit int) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(head[:]))
	if limit >= 0 && n > limit {
		return nil, &FrameTooLargeError{Size: n, Limit: limit}
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}
