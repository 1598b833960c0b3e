package pkgmgr

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/host/policy/fold"
)

// publishAs publishes name@version with publisher as given ("" leaves the field out), signed
// with key (nil: unsigned), into the registry at w.reg; indexPublisher, when not nil, is
// written as the index's publisher of the package afterwards.
func (w *signWorld) publishAs(name, version, publisher string, key *SignKey, indexPublisher *string) {
	w.t.Helper()
	m := httpManifest(name, version, "Acme")
	if publisher == "" {
		m = strings.Replace(m, `"publisher":"Tests",`, "", 1)
	} else {
		m = strings.Replace(m, `"publisher":"Tests"`, `"publisher":"`+publisher+`"`, 1)
	}
	if _, _, err := PublishWith(w.reg, rawPackage(w.t, m, nil), time.Unix(1_800_000_000, 0), PublishOptions{Sign: key}); err != nil {
		w.t.Fatal(err)
	}
	if indexPublisher != nil {
		idx := readIndex(w.t, w.reg)
		idx.Packages[name].Publisher = *indexPublisher
		writeIndex(w.t, w.reg, idx)
	}
}

// replaceRegistry throws the registry away, as an attacker who controls it (or the network)
// would: what is published next is all it serves.
func (w *signWorld) replaceRegistry() { os.RemoveAll(filepath.Dir(w.reg)) }

// freshProject points w at a new project folder, with the same user (trust file).
func (w *signWorld) freshProject() {
	w.proj = filepath.Join(filepath.Dir(w.proj), "other-"+filepath.Base(w.t.TempDir()))
	os.MkdirAll(w.proj, 0o755)
	w.pr.Dir = w.proj
}

func ptr(s string) *string { return &s }

// Issue 27 item 7, as a hostile registry would try it: the user trusts Acme's key, and the
// registry serves Acme's package unsigned, with its publisher dropped or renamed ("Acme Inc"
// for "Acme Inc.", a Cyrillic А), or signed by another key under a look-alike name. A fresh
// halo add (a new project: no halo.lock to compare with) refuses each with PACKAGE_SIGNATURE
// and changes nothing on disk.
func TestSignedToUnsignedDowngrade(t *testing.T) {
	evil, _ := GenerateSignKey()
	tests := []struct {
		name string
		// seen: the user installed acme signed before, in another project; else they only
		// trust Acme's key (halo trust key add).
		seen    bool
		attack  func(w *signWorld)
		accept  func(w *signWorld) string
		code    string
		message string
	}{
		{"unsigned, publisher dropped, seen signed before", true,
			func(w *signWorld) { w.publishAs("acme", "1.0.1", "", nil, nil) }, nil,
			CodeSignature, `acme@1.0.1 is not signed, but you have installed acme signed by "Acme Inc." before`},
		{"signed by another key as another publisher, seen signed before", true,
			func(w *signWorld) { w.publishAs("acme", "1.0.1", "Other Co", evil, ptr("Other Co")) }, nil,
			CodeSignature, `you have installed acme signed by "Acme Inc." before, but acme@1.0.1 says its publisher is "Other Co"`},
		{"unsigned, renamed without the dot", false,
			func(w *signWorld) { w.publishAs("acme", "1.0.1", "Acme Inc", nil, ptr("Acme Inc")) }, nil,
			CodeSignature, `it names publisher "Acme Inc", which reads as "Acme Inc.", whose key ` /* + key id */},
		{"unsigned, renamed with a Cyrillic letter", false,
			func(w *signWorld) { w.publishAs("acme", "1.0.1", "\u0410cme Inc.", nil, nil) }, nil,
			CodeSignature, "acme@1.0.1 is not signed, but it names publisher \"\u0410cme Inc.\", which reads as \"Acme Inc.\""},
		{"unsigned, publisher dropped, the index still names it", false,
			func(w *signWorld) { w.publishAs("acme", "1.0.1", "", nil, ptr("ACME, Inc.")) }, nil,
			CodeSignature, `the registry says its publisher is "ACME, Inc.", which reads as "Acme Inc."`},
		{"signed by another key under a look-alike name, that key accepted", false,
			func(w *signWorld) { w.publishAs("acme", "1.0.1", "Acme, Inc.", evil, ptr("Acme, Inc.")) },
			func(*signWorld) string { return evil.KeyID() },
			CodeSignature, `it names publisher "Acme, Inc.", which reads as "Acme Inc.", whose key ` /* ... */},
		{"a version signed beside an unsigned one", false,
			func(w *signWorld) {
				w.publishAs("acme", "1.0.0", "Acme Inc.", w.key, nil)
				w.publishAs("acme", "1.0.1", "Acme Co", nil, nil)
			}, nil,
			CodeSignature, `acme@1.0.1 is not signed, but the registry lists version 1.0.0 of acme signed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newSignWorld(t)
			w.pr.FoldPublisher = func(s string) string { return fold.String(s, fold.Options{}).Folded }
			w.publish("acme", "1.0.0", "Acme Inc.", w.key)
			if tt.seen {
				if _, err := w.pr.Add(context.Background(), "acme", AddOptions{AcceptKey: w.key.KeyID()}); err != nil {
					t.Fatal(err)
				}
			} else {
				k, _ := NewPublisherKey("Acme Inc.", w.key.PublicKey())
				if _, err := w.pr.AddKey(k, ""); err != nil {
					t.Fatal(err)
				}
			}
			w.freshProject()
			w.replaceRegistry()
			tt.attack(w)
			before := w.state()
			opts := AddOptions{}
			if tt.accept != nil {
				opts.AcceptKey = tt.accept(w)
			}
			_, err := w.pr.Add(context.Background(), "acme", opts)
			wantCode(t, err, tt.code, tt.message)
			if w.state() != before {
				t.Errorf("a refused add changed the disk")
			}
		})
	}
}

// A first-party package (KnownSigned) from a replaced registry, unsigned and without its
// publisher, is refused even for a user who never installed it; and an unsigned halo.lock
// entry for it, which a repository could commit pointing anywhere, is refused by halo install.
func TestFirstPartyUnsignedRefused(t *testing.T) {
	w := newSignWorld(t)
	project, _ := GenerateSignKey()
	k, _ := NewPublisherKey("Halo", project.PublicKey())
	w.pr.BuiltInKeys = []PublisherKey{k}
	w.pr.KnownSigned = map[string]string{"stripe": "Halo"}
	w.publishAs("stripe", "9.0.0", "", nil, nil)
	before := w.state()
	_, err := w.pr.Add(context.Background(), "stripe", AddOptions{})
	wantCode(t, err, CodeSignature, `stripe@9.0.0 is not signed, but stripe is one of "Halo"'s packages, which are all signed`)
	if w.state() != before {
		t.Fatalf("a refused add changed the disk")
	}
	// The repository's lock: installed without KnownSigned, then checked with it.
	w.pr.KnownSigned = nil
	if _, err := w.pr.Add(context.Background(), "stripe", AddOptions{}); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(w.proj, StateDir))
	w.pr.KnownSigned = map[string]string{"stripe": "Halo"}
	before = w.state()
	_, err = w.pr.Install(context.Background(), InstallOptions{})
	wantCode(t, err, CodeSignature, `stripe@9.0.0 is not signed, but stripe is one of "Halo"'s packages`)
	if w.state() != before {
		t.Fatalf("a refused install changed the disk")
	}
}

// A key for a publisher whose name reads as one already trusted is refused; removing a
// publisher's last key forgets what it signed, so a publisher that stopped signing installs
// unsigned again.
func TestPublisherNamesFolded(t *testing.T) {
	w := newSignWorld(t)
	w.publish("acme", "1.0.0", "Acme Inc.", w.key)
	if _, err := w.pr.Add(context.Background(), "acme", AddOptions{AcceptKey: w.key.KeyID()}); err != nil {
		t.Fatal(err)
	}
	trust, _ := os.ReadFile(w.trust)
	if !strings.Contains(string(trust), `"signed": {`) || !strings.Contains(string(trust), `"acme": "Acme Inc."`) {
		t.Fatalf("the trust file does not record acme as signed:\n%s", trust)
	}
	other, _ := GenerateSignKey()
	k, _ := NewPublisherKey("ACME inc", other.PublicKey())
	_, err := w.pr.AddKey(k, "")
	wantCode(t, err, CodeSignature, `publisher "ACME inc" reads as "Acme Inc.", whose key you trust already`)
	w.freshProject()
	w.replaceRegistry()
	w.publishAs("acme", "2.0.0", "", nil, nil)
	_, err = w.pr.Add(context.Background(), "acme", AddOptions{})
	wantCode(t, err, CodeSignature, "if it changed hands, halo trust key remove 'Acme Inc.' forgets what was signed")
	if _, err := w.pr.RemoveKey("Acme Inc.", ""); err != nil {
		t.Fatal(err)
	}
	ip, err := w.pr.Add(context.Background(), "acme", AddOptions{})
	if err != nil || ip.Entry.Signature != nil {
		t.Fatalf("after the publisher's keys were removed: %+v %v", ip, err)
	}
}

// The note of what was installed signed is not part of the install: a trust file that
// cannot be read or written is warned of, and nothing fails.
func TestNoteSignedWarns(t *testing.T) {
	var warned []string
	p := &Project{TrustFile: t.TempDir(), Warn: func(m string) { warned = append(warned, m) }}
	p.noteSigned(map[string]string{"acme": "Acme Inc."})
	if len(warned) != 1 || !strings.Contains(warned[0], "could not note in your trust file which packages were installed signed") {
		t.Fatalf("warnings %q", warned)
	}
}
