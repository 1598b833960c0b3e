package pkgmgr

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"aead.dev/minisign"
)

// CodeSignature: a package's signature does not verify, is missing where its publisher
// signs, or was made by a key this user does not trust for that publisher.
const CodeSignature = "PACKAGE_SIGNATURE"

// SignatureExt is the suffix of the minisign signature file published beside a package.
const SignatureExt = ".minisig"

// A Signature is a package's minisign signature as a registry index and halo.lock record it.
type Signature struct {
	// Publisher is the manifest's publisher the signature vouches for (halo.lock only: in an
	// index the publisher is the package's own).
	Publisher string `json:"publisher,omitempty"`
	// KeyID is the signing key's id, as minisign prints it (16 hex digits).
	KeyID string `json:"keyId"`
	// PublicKey is the signing key's public half in minisign's one-line form ("RW...").
	// It is what a user is shown the first time a publisher is seen: a claim, trusted only
	// once the user accepts it.
	PublicKey string `json:"publicKey"`
	// Minisig is the signature file's text, verifiable with `minisign -V`.
	Minisig string `json:"minisig"`
}

// KeyID formats a minisign key id as minisign prints it.
func KeyID(id uint64) string { return fmt.Sprintf("%016X", id) }

// ParseKeyID reads a key id as KeyID writes it (any case).
func ParseKeyID(s string) (uint64, error) {
	if len(s) != 16 {
		return 0, errorf(CodeSignature, "%q is not a key id: want 16 hex digits", s)
	}
	id, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, errorf(CodeSignature, "%q is not a key id: want 16 hex digits", s)
	}
	return id, nil
}

// ParsePublicKey reads a minisign public key: the one-line "RW..." form, or a .pub file's
// text (its untrusted comment line is ignored).
func ParsePublicKey(s string) (minisign.PublicKey, error) {
	var k minisign.PublicKey
	text := strings.TrimSpace(s)
	if err := k.UnmarshalText([]byte(text)); err != nil {
		return k, errorf(CodeSignature, "not a minisign public key (want the RW... line of a .pub file): %v", err)
	}
	return k, nil
}

// GenerateKey makes a publisher key pair. The secret key is returned unencrypted: the caller
// encrypts it (minisign.EncryptKey) unless asked not to.
func GenerateKey() (minisign.PublicKey, minisign.PrivateKey, error) {
	return minisign.GenerateKey(rand.Reader)
}

// ParseSecretKey reads a minisign secret key file's text; an encrypted one needs password.
func ParseSecretKey(text []byte, password func() (string, error)) (minisign.PrivateKey, error) {
	if minisign.IsEncrypted(text) {
		if password == nil {
			return minisign.PrivateKey{}, errorf(CodeSignature, "the secret key is encrypted: a password is needed")
		}
		pw, err := password()
		if err != nil {
			return minisign.PrivateKey{}, err
		}
		k, err := minisign.DecryptKey(pw, text)
		if err != nil {
			return minisign.PrivateKey{}, errorf(CodeSignature, "cannot decrypt the secret key: wrong password?")
		}
		return k, nil
	}
	var k minisign.PrivateKey
	if err := k.UnmarshalText(bytes.TrimSpace(text)); err != nil {
		return k, errorf(CodeSignature, "not a minisign secret key: %v", err)
	}
	return k, nil
}

// Sign signs a package file (prehashed, as minisign signs by default) and returns its
// signature. The trusted comment names the file and the time, as minisign's does.
func Sign(pkg *Package, key minisign.PrivateKey, now time.Time) (*Signature, error) {
	pub, ok := key.Public().(minisign.PublicKey)
	if !ok {
		return nil, fmt.Errorf("minisign: no public key")
	}
	r := minisign.NewReader(bytes.NewReader(pkg.Bytes))
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, err
	}
	trusted := fmt.Sprintf("timestamp:%d\tfile:%s\thashed", now.Unix(), pkg.FileName())
	untrusted := "signature from halo secret key " + KeyID(key.ID())
	sig := r.SignWithComments(key, trusted, untrusted)
	return &Signature{KeyID: KeyID(key.ID()), PublicKey: pub.String(), Minisig: string(sig)}, nil
}

// signatureKeyID returns the id of the key that made sig, read from the signature itself
// (KeyID in an index or lock is only a copy).
func signatureKeyID(sig *Signature) (uint64, error) {
	var s minisign.Signature
	if err := s.UnmarshalText([]byte(sig.Minisig)); err != nil {
		return 0, errorf(CodeSignature, "the signature is not a minisign signature: %v", err)
	}
	return s.KeyID, nil
}

// verify checks sig over data with key.
func verify(sig *Signature, data []byte, key minisign.PublicKey) bool {
	return minisign.Verify(key, data, []byte(sig.Minisig))
}
