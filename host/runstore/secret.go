package runstore

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"halolang.dev/halo/pkgmgr/statedir"
)

// secretFile is where Secret keeps the store's key.
func (s *SQLite) secretFile() string {
	if s.opts.SecretFile != "" {
		return s.opts.SecretFile
	}
	return filepath.Join(filepath.Dir(s.dir), "serve.key")
}

// Secret reads the key file, or makes it (mode 0600) with gen. A key file that is a
// symbolic link, not a regular file, or readable by others is refused.
func (s *SQLite) Secret(ctx context.Context, gen func() ([]byte, error)) ([]byte, error) {
	dir, name := filepath.Dir(s.secretFile()), filepath.Base(s.secretFile())
	var root *os.Root
	var err error
	if filepath.Base(dir) == statedir.Name {
		root, _, err = statedir.Open(filepath.Dir(dir), true)
	} else {
		root, err = os.OpenRoot(dir)
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	for range 2 {
		fd, err := root.OpenFile(name, os.O_RDONLY|noFollow, 0)
		if err == nil {
			defer fd.Close()
			fi, err := fd.Stat()
			if err != nil {
				return nil, err
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
				return nil, Errorf(CodeStore, "%s must be a file only its owner can read (mode 0600), not %s", s.secretFile(), fi.Mode())
			}
			key, err := io.ReadAll(io.LimitReader(fd, 4096))
			if err != nil {
				return nil, err
			}
			if len(key) < 32 {
				return nil, Errorf(CodeStore, "%s holds %d bytes, fewer than the 32 of a key: delete it and a new key is made (links made with the old one stop working)", s.secretFile(), len(key))
			}
			return key, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, Errorf(CodeStore, "approval key %s: %v", s.secretFile(), err)
		}
		key, err := gen()
		if err != nil {
			return nil, err
		}
		w, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // made by someone else meanwhile: read theirs
		}
		if err != nil {
			return nil, Errorf(CodeStore, "approval key %s: %v", s.secretFile(), err)
		}
		_, werr := w.Write(key)
		if cerr := w.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			root.Remove(name)
			return nil, werr
		}
		return key, nil
	}
	return nil, Errorf(CodeStore, "approval key %s: cannot be read or made", s.secretFile())
}

// SealKey returns the key paused records are sealed with: derived from the store's key
// (Secret, made on first use), so that it differs from the one approval links are signed
// with.
func (s *SQLite) SealKey() ([]byte, error) {
	key, err := s.Secret(context.Background(), NewKey)
	if err != nil {
		return nil, err
	}
	return DeriveSealKey(key), nil
}

// DeriveSealKey returns the seal key of a store whose key is key.
func DeriveSealKey(key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("halo run record seal v1"))
	return m.Sum(nil)
}

// NewKey makes a store key: 32 random bytes.
func NewKey() ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return b, nil
}
