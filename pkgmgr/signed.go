package pkgmgr

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"aead.dev/minisign"
)

// checkSigned decides whether a package may be installed as far as signatures go, and
// returns the signature to record in halo.lock (nil for an unsigned package) and the key to
// pin when the user accepted a publisher's first key (accept holds the key ids accepted).
// keys are the keys the user trusts; claims say why the package must be signed, and by whom
// (signClaims: halo.lock, the user's record, the index, a trusted publisher's name).
//
//   - A package any claim applies to must be signed.
//   - A package a claim names a publisher for must name that publisher, exactly.
//   - A package whose publisher has a trusted key must be signed by one of them.
//   - A signed package must name its publisher, and its signature must verify.
//   - The first key seen for a publisher is refused (PACKAGE_UNTRUSTED, the key shown)
//     unless accepted; then it is pinned.
func checkSigned(what string, pkg *Package, sig *Signature, claims []signClaim, accept []string, keys []PublisherKey, fix string) (*Signature, *PublisherKey, error) {
	m := pkg.Manifest
	publisher := m.Publisher
	trusted := keysFor(keys, publisher)
	if sig == nil {
		if len(claims) > 0 {
			return nil, nil, errorf(CodeSignature, "%s: %s@%s is not signed, but %s%s", what, m.Name, m.Version, claims[0].why, claims[0].fix)
		}
		return nil, nil, nil
	}
	for _, c := range claims {
		switch {
		case c.publisher == "" || c.publisher == publisher:
		case c.lookalike:
			return nil, nil, errorf(CodeSignature, "%s: %s: a package under a look-alike of a trusted publisher's name is refused, signed or not", what, c.why)
		default:
			return nil, nil, errorf(CodeSignature, "%s: %s, but %s@%s says its publisher is %s%s", what, c.why, m.Name, m.Version, quoted(publisher), c.fix)
		}
	}
	id, err := signatureKeyID(sig)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	keyID := KeyID(id)
	if publisher == "" {
		return nil, nil, errorf(CodeSignature, "%s: %s@%s is signed, but names no publisher: a signature vouches for a publisher", what, m.Name, m.Version)
	}
	out := &Signature{Publisher: publisher, KeyID: keyID, PublicKey: sig.PublicKey, Minisig: sig.Minisig}
	for _, k := range trusted {
		if k.KeyID != keyID {
			continue
		}
		pub, err := k.key()
		if err != nil {
			return nil, nil, err
		}
		if !verify(sig, pkg.Bytes, pub) {
			return nil, nil, errorf(CodeSignature, "%s: the signature of %s@%s does not verify with %s's key %s: the package or its signature was changed", what, m.Name, m.Version, quoted(publisher), keyID)
		}
		out.PublicKey = k.PublicKey
		return out, nil, nil
	}
	if len(trusted) > 0 {
		have := make([]string, len(trusted))
		for i, k := range trusted {
			have[i] = k.KeyID
		}
		return nil, nil, errorf(CodeSignature, "%s: %s@%s is signed by key %s, but you trust only %s for %s; if %s changed keys, check the new one with them, then run: halo trust key add %s <public key>", what, m.Name, m.Version, keyID, strings.Join(have, ", "), quoted(publisher), quoted(publisher), shellQuote(publisher))
	}
	// A publisher seen for the first time: the key the source offers must be the one that
	// signed, and the signature must verify before the user is even asked.
	pub, err := ParsePublicKey(sig.PublicKey)
	if err != nil || KeyID(pub.ID()) != keyID {
		return nil, nil, errorf(CodeSignature, "%s: %s@%s is signed by key %s, and its source offers no public key with that id", what, m.Name, m.Version, keyID)
	}
	if !verify(sig, pkg.Bytes, pub) {
		return nil, nil, errorf(CodeSignature, "%s: the signature of %s@%s does not verify with the key %s it names: the package or its signature was changed", what, m.Name, m.Version, keyID)
	}
	for _, a := range accept {
		if strings.EqualFold(a, keyID) {
			return out, &PublisherKey{Publisher: publisher, KeyID: keyID, PublicKey: pub.String()}, nil
		}
	}
	return nil, nil, errorf(CodeUntrusted, "%s: %s@%s is signed by %s, a publisher new to you, with key %s (public key %s). Check that key with %s, then run: %s --accept-key %s", what, m.Name, m.Version, quoted(publisher), keyID, pub.String(), quoted(publisher), fix, keyID)
}

func quoted(s string) string { return fmt.Sprintf("%q", s) }

// shellQuote quotes s for a shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./@", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fetchSignature reads the signature published beside a package file or URL, if any.
func (p *Project) fetchSignature(ctx context.Context, s Spec, abs string) (*Signature, error) {
	var text []byte
	switch {
	case s.URL != "":
		u, err := url.Parse(s.URL)
		if err != nil {
			return nil, errorf(CodeRegistry, "%q is not a URL", s.URL)
		}
		u.Path += SignatureExt
		u.RawPath = ""
		b, err := Download(ctx, p.Registries.Client, u.String())
		if Code(err) == CodeNotFound {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		text = b
	case strings.HasSuffix(abs, ".halotool"):
		b, err := os.ReadFile(abs + SignatureExt)
		if os.IsNotExist(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		text = b
	default:
		return nil, nil
	}
	// A signature file beside a package carries no public key: only a key the user already
	// trusts (or accepts by the id the signature names, with halo trust key add) can verify it.
	if len(text) > 4096 {
		return nil, errorf(CodeSignature, "the signature beside %s is too long to be a minisign signature", s.URL+abs)
	}
	return &Signature{Minisig: string(text)}, nil
}

// checkLockedSignature verifies a lock entry's signature over pkg with the key this user
// trusts for its publisher (a key accepted now is added to keys and to ch). An entry without
// a signature is left to its sha256 pin (halo.lock is the repository's, and a repository
// that wants an unsigned package can drop the signature as easily as change the pin), unless
// a claim this user holds says it must be signed: the package names a publisher whose key
// the user trusts, the user installed it signed before, or it is a first-party package.
func checkLockedSignature(name string, e *LockEntry, pkg *Package, claims []signClaim, accept []string, keys *[]PublisherKey, ch *change) error {
	if e.Signature != nil && e.Signature.Publisher != pkg.Manifest.Publisher {
		return errorf(CodeSignature, "%s: halo.lock says %q signed it, but the package names publisher %q", name, e.Signature.Publisher, pkg.Manifest.Publisher)
	}
	_, pin, err := checkSigned(name, pkg, e.Signature, claims, accept, *keys, "halo install")
	if err != nil {
		return err
	}
	if pin != nil {
		*keys = append(*keys, *pin)
		ch.keys = append(ch.keys, *pin)
	}
	return nil
}

// now is the project's clock.
func (p *Project) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// A SignKey is a publisher's secret key, ready to sign.
type SignKey struct {
	key minisign.PrivateKey
}

// NewSignKey reads a minisign secret key file's text; password is asked for an encrypted one.
func NewSignKey(text []byte, password func() (string, error)) (*SignKey, error) {
	k, err := ParseSecretKey(text, password)
	if err != nil {
		return nil, err
	}
	return &SignKey{key: k}, nil
}

// KeyID is the key's id.
func (k *SignKey) KeyID() string { return KeyID(k.key.ID()) }

// Sign signs pkg, which must name its publisher.
func (k *SignKey) Sign(pkg *Package, now time.Time) (*Signature, error) {
	return k.signPackage(pkg, now)
}

// PublicKey is the key's public half in minisign's one-line form.
func (k *SignKey) PublicKey() string {
	pub, _ := k.key.Public().(minisign.PublicKey)
	return pub.String()
}

func (k *SignKey) signPackage(pkg *Package, now time.Time) (*Signature, error) {
	if pkg.Manifest.Publisher == "" {
		return nil, errorf(CodeSignature, "%s has no publisher in halo-tool.json: a signature vouches for a publisher, so name one", pkg.FileName())
	}
	return Sign(pkg, k.key, now)
}

// GenerateSignKey makes a fresh key to sign with.
func GenerateSignKey() (*SignKey, error) {
	_, k, err := GenerateKey()
	if err != nil {
		return nil, err
	}
	return &SignKey{key: k}, nil
}

// PublicKeyFile is the key's public half as a minisign .pub file.
func (k *SignKey) PublicKeyFile() []byte {
	pub, _ := k.key.Public().(minisign.PublicKey)
	b, _ := pub.MarshalText()
	return append(b, '\n')
}
