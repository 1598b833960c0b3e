package plugin

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	goplugin "github.com/hashicorp/go-plugin"
)

// A pinned executable is one opened, and hashed through the descriptor it was opened on,
// before it is started: the host then executes that same descriptor (execPath), not the path
// again, so a file swapped in at the path between the check and the start (by rename, say)
// never runs. A change to the file itself in that window (written in place) is caught by
// watching it (changed): a started program's file cannot be written any more while it runs
// (ETXTBSY), so what was hashed is what runs unless the watch saw a write.
type pinned struct {
	f     *os.File
	watch changeWatch
	sum   []byte
	// execFD is the duplicate of f that the started process executes (execPinned); -1
	// before.
	execFD    int
	closeOnce sync.Once
}

// openPinned opens path, starts watching it for writes, and checks its sha256 against sum
// through the open descriptor. A mismatch is goplugin.ErrChecksumsDoNotMatch.
func openPinned(path string, sum []byte) (*pinned, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	p := &pinned{f: f, watch: watchWrites(f), sum: sum, execFD: -1}
	if err := p.check(sum); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// check hashes the file from its start through the descriptor and compares with sum.
func (p *pinned) check(sum []byte) error {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(p.f, 0, 1<<62)); err != nil {
		return fmt.Errorf("error verifying checksum: %w", err)
	}
	if subtle.ConstantTimeCompare(h.Sum(nil), sum) != 1 {
		return goplugin.ErrChecksumsDoNotMatch
	}
	return nil
}

// verifyStarted fails when the file may have changed between the check and the start.
func (p *pinned) verifyStarted() error {
	changed, ok := p.watch.changed()
	if !ok {
		// No watch: hash again. The started program's file can no longer be written, so
		// the content now is the content that was executed.
		return p.check(p.sum)
	}
	if changed {
		return errPinChanged
	}
	return nil
}

// errPinChanged is a pinned file written to while the host started it.
var errPinChanged = errors.New("the executable was written to while it was being started")

// Close releases the descriptors and the watch. It is safe to call more than once.
func (p *pinned) Close() {
	p.closeOnce.Do(func() {
		p.watch.close()
		closeFD(p.execFD)
		p.f.Close()
	})
}
