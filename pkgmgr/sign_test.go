package pkgmgr

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// signWorld is a registry on disk, a project, and the user's trust file (outside both),
// plus the honest publisher's key.
type signWorld struct {
	t                      *testing.T
	reg, proj, home, trust string
	key                    *SignKey
	pr                     *Project
}

func newSignWorld(t *testing.T) *signWorld {
	root := t.TempDir()
	w := &signWorld{t: t, reg: filepath.Join(root, "site", "index.json"), proj: filepath.Join(root, "proj"), home: filepath.Join(root, "home")}
	w.trust = filepath.Join(w.home, "halo", "trust.json")
	os.MkdirAll(w.proj, 0o755)
	var err error
	if w.key, err = GenerateSignKey(); err != nil {
		t.Fatal(err)
	}
	w.pr = &Project{Dir: w.proj, Registry: w.reg, TrustFile: w.trust, Now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
	return w
}

// publish packs an http package by publisher and publishes it, signed with key (nil: unsigned).
func (w *signWorld) publish(name, version, publisher string, key *SignKey) {
	w.t.Helper()
	m := strings.Replace(httpManifest(name, version, "Acme"), `"publisher":"Tests"`, `"publisher":"`+publisher+`"`, 1)
	data := rawPackage(w.t, m, nil)
	if _, _, err := PublishWith(w.reg, data, time.Unix(1_800_000_000, 0), PublishOptions{Sign: key}); err != nil {
		w.t.Fatal(err)
	}
}

// state is everything a refused command must leave as it was: the project and the user's
// trust file.
func (w *signWorld) state() string { return hashTree(w.t, w.proj) + "\n--\n" + hashTree(w.t, w.home) }

func wantCode(t *testing.T, err error, code, msg string) {
	t.Helper()
	if Code(err) != code || !strings.Contains(err.Error(), msg) {
		t.Fatalf("error %v (code %s); want %s containing %q", err, Code(err), code, msg)
	}
}

// The first key seen for a publisher is shown and refused until accepted; accepted, it is
// pinned in the user's trust file (not the project), the key id recorded in halo.lock, and
// halo install verifies the signature again.
func TestSignedAddFirstKeyThenPinned(t *testing.T) {
	w := newSignWorld(t)
	w.publish("acme", "1.0.0", "Acme Inc.", w.key)
	before := w.state()
	_, err := w.pr.Add(context.Background(), "acme", AddOptions{})
	wantCode(t, err, CodeUntrusted, `signed by "Acme Inc.", a publisher new to you, with key `+w.key.KeyID()+" (public key "+w.key.PublicKey()+")")
	if !strings.Contains(err.Error(), "halo add acme --accept-key "+w.key.KeyID()) {
		t.Errorf("the refusal does not say how to accept: %v", err)
	}
	if w.state() != before {
		t.Fatalf("a refused add changed the disk")
	}
	if _, err := w.pr.Add(context.Background(), "acme", AddOptions{AcceptKey: "0000000000000001"}); Code(err) != CodeUntrusted {
		t.Fatalf("another key id accepted: %v", err)
	}
	ip, err := w.pr.Add(context.Background(), "acme", AddOptions{AcceptKey: strings.ToLower(w.key.KeyID())})
	if err != nil {
		t.Fatal(err)
	}
	if s := ip.Entry.Signature; s == nil || s.KeyID != w.key.KeyID() || s.Publisher != "Acme Inc." || !strings.HasPrefix(s.Minisig, "untrusted comment:") {
		t.Fatalf("lock signature %+v", ip.Entry.Signature)
	}
	lock, _ := os.ReadFile(filepath.Join(w.proj, LockFile))
	if !strings.Contains(string(lock), `"keyId": "`+w.key.KeyID()+`"`) {
		t.Errorf("halo.lock lacks the key id:\n%s", lock)
	}
	keys, _ := w.pr.Keys()
	if len(keys) != 1 || keys[0].Publisher != "Acme Inc." || keys[0].KeyID != w.key.KeyID() || keys[0].Added != "2027-01-15T08:00:00Z" {
		t.Fatalf("trusted keys %+v", keys)
	}
	if _, err := os.Stat(filepath.Join(w.proj, StateDir, ProjectTrustFile)); err == nil {
		t.Errorf("a key went into the project")
	}
	// A second version signed by the same key needs no question.
	w.publish("acme", "1.1.0", "Acme Inc.", w.key)
	if _, err := w.pr.Add(context.Background(), "acme", AddOptions{}); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(w.proj, StateDir))
	if _, err := w.pr.Install(context.Background(), InstallOptions{}); err != nil {
		t.Fatal(err)
	}
}

// An attacker who controls the registry (or the network) forges the signature: refused.
func TestSignedForgedSignature(t *testing.T) {
	w := newSignWorld(t)
	w.publish("acme", "1.0.0", "Acme Inc.", w.key)
	if _, err := w.pr.Add(context.Background(), "acme", AddOptions{AcceptKey: w.key.KeyID()}); err != nil {
		t.Fatal(err)
	}
	// The attacker publishes 1.1.0 with a signature copied from 1.0.0: the key id matches,
	// the signature does not.
	w.publish("acme", "1.1.0", "Acme Inc.", nil)
	idx := readIndex(t, w.reg)
	idx.Packages["acme"].Versions["1.1.0"].Signature = idx.Packages["acme"].Versions["1.0.0"].Signature
	writeIndex(t, w.reg, idx)
	before := w.state()
	_, err := w.pr.Add(context.Background(), "acme", AddOptions{})
	wantCode(t, err, CodeSignature, "does not verify with \"Acme Inc.\"'s key "+w.key.KeyID())
	if w.state() != before {
		t.Fatalf("a refused add changed the disk")
	}
	// A signature whose bytes were flipped, for a publisher never seen: refused before the
	// user is even asked.
	w2 := newSignWorld(t)
	w2.publish("acme", "1.0.0", "Acme Inc.", w2.key)
	idx = readIndex(t, w2.reg)
	sig := idx.Packages["acme"].Versions["1.0.0"].Signature
	lines := strings.Split(sig.Minisig, "\n")
	lines[1] = lines[1][:20] + flip(lines[1][20:21]) + lines[1][21:]
	sig.Minisig = strings.Join(lines, "\n")
	writeIndex(t, w2.reg, idx)
	before = w2.state()
	_, err = w2.pr.Add(context.Background(), "acme", AddOptions{AcceptKey: w2.key.KeyID()})
	wantCode(t, err, CodeSignature, "does not verify")
	if w2.state() != before {
		t.Fatalf("a refused add changed the disk")
	}
}

// An attacker replaces the index and the package with a pair signed by their own key,
// claiming the same publisher (and offering their key): refused, the pinned key wins.
func TestSignedReplacedByUnknownKey(t *testing.T) {
	w := newSignWorld(t)
	w.publish("acme", "1.0.0", "Acme Inc.", w.key)
	if _, err := w.pr.Add(context.Background(), "acme", AddOptions{AcceptKey: w.key.KeyID()}); err != nil {
		t.Fatal(err)
	}
	evil, _ := GenerateSignKey()
	os.RemoveAll(filepath.Dir(w.reg))
	w.publish("acme", "1.0.1", "Acme Inc.", evil)
	before := w.state()
	_, err := w.pr.Add(context.Background(), "acme", AddOptions{})
	wantCode(t, err, CodeSignature, "is signed by key "+evil.KeyID()+", but you trust only "+w.key.KeyID()+" for \"Acme Inc.\"")
	// Accepting the attacker's key by id does not help: the publisher already has a key.
	_, err = w.pr.Add(context.Background(), "acme", AddOptions{AcceptKey: evil.KeyID()})
	wantCode(t, err, CodeSignature, "you trust only")
	// Nor does dropping the signature.
	os.RemoveAll(filepath.Dir(w.reg))
	w.publish("acme", "1.0.2", "Acme Inc.", nil)
	_, err = w.pr.Add(context.Background(), "acme", AddOptions{})
	wantCode(t, err, CodeSignature, "1.0.2 is not signed")
	// Nor changing the publisher's name: halo.lock has acme signed by "Acme Inc.".
	os.RemoveAll(filepath.Dir(w.reg))
	w.publish("acme", "1.0.3", "Acme Incorporated", evil)
	_, err = w.pr.Add(context.Background(), "acme", AddOptions{AcceptKey: evil.KeyID()})
	wantCode(t, err, CodeSignature, `halo.lock has acme signed by "Acme Inc."`)
	if w.state() != before {
		t.Fatalf("a refused add changed the disk")
	}
}

// A key the user removed from trust no longer vouches for anything: halo add asks again,
// and halo install refuses the lock's signature by it.
func TestSignedKeyRemovedFromTrust(t *testing.T) {
	w := newSignWorld(t)
	w.publish("acme", "1.0.0", "Acme Inc.", w.key)
	if _, err := w.pr.Add(context.Background(), "acme", AddOptions{AcceptKey: w.key.KeyID()}); err != nil {
		t.Fatal(err)
	}
	gone, err := w.pr.RemoveKey("Acme Inc.", w.key.KeyID())
	if err != nil || len(gone) != 1 {
		t.Fatalf("%v %v", gone, err)
	}
	os.RemoveAll(filepath.Join(w.proj, StateDir))
	before := w.state()
	_, err = w.pr.Install(context.Background(), InstallOptions{})
	wantCode(t, err, CodeUntrusted, "a publisher new to you")
	_, err = w.pr.Add(context.Background(), "acme", AddOptions{})
	wantCode(t, err, CodeUntrusted, "a publisher new to you")
	if w.state() != before {
		t.Fatalf("a refused command changed the disk")
	}
	if _, err := w.pr.RemoveKey("Acme Inc.", ""); Code(err) != CodeNotFound {
		t.Errorf("removing a key no longer there: %v", err)
	}
	// halo install --accept-key trusts it again.
	if _, err := w.pr.Install(context.Background(), InstallOptions{AcceptKeys: []string{w.key.KeyID()}}); err != nil {
		t.Fatal(err)
	}
	if keys, _ := w.pr.Keys(); len(keys) != 1 {
		t.Errorf("keys %+v", keys)
	}
}

// A repository's halo.lock whose signature was tampered with is refused by halo install.
func TestSignedLockTampered(t *testing.T) {
	w := newSignWorld(t)
	w.publish("acme", "1.0.0", "Acme Inc.", w.key)
	if _, err := w.pr.Add(context.Background(), "acme", AddOptions{AcceptKey: w.key.KeyID()}); err != nil {
		t.Fatal(err)
	}
	lock, _ := ReadLock(w.proj)
	lock.Tools["acme"].Signature.Publisher = "Someone Else"
	b, _ := lock.Marshal()
	os.WriteFile(filepath.Join(w.proj, LockFile), b, 0o644)
	before := w.state()
	_, err := w.pr.Install(context.Background(), InstallOptions{})
	wantCode(t, err, CodeSignature, `halo.lock says "Someone Else" signed it`)
	if w.state() != before {
		t.Fatalf("a refused install changed the disk")
	}
}

// A built-in publisher key is trusted without asking, cannot be removed, and no other key
// is accepted for its publisher: a package that claims to be first-party is refused unless
// the project signed it.
func TestSignedBuiltInPublisher(t *testing.T) {
	w := newSignWorld(t)
	project, _ := GenerateSignKey()
	k, err := NewPublisherKey("Halo", project.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	w.pr.BuiltInKeys = []PublisherKey{k}
	w.publish("stripe", "9.0.0", "Halo", project)
	ip, err := w.pr.Add(context.Background(), "stripe", AddOptions{})
	if err != nil || ip.Entry.Signature == nil || ip.Entry.Signature.KeyID != project.KeyID() {
		t.Fatalf("%+v %v", ip, err)
	}
	evil, _ := GenerateSignKey()
	w.publish("stripe", "9.0.1", "Halo", evil)
	_, err = w.pr.Add(context.Background(), "stripe", AddOptions{AcceptKey: evil.KeyID()})
	wantCode(t, err, CodeSignature, "you trust only "+project.KeyID())
	w.publish("stripe", "9.0.2", "Halo", nil)
	_, err = w.pr.Add(context.Background(), "stripe", AddOptions{})
	wantCode(t, err, CodeSignature, "9.0.2 is not signed")
	ek, _ := NewPublisherKey("Halo", evil.PublicKey())
	_, err = w.pr.AddKey(ek, "")
	wantCode(t, err, CodeSignature, "built into halo")
	_, err = w.pr.RemoveKey("Halo", "")
	wantCode(t, err, CodeSignature, "cannot be removed")
}

// Signing needs a publisher; a package without a signature from a publisher never seen is
// installed as before, and says so.
func TestUnsignedStillInstalls(t *testing.T) {
	w := newSignWorld(t)
	data := rawPackage(t, strings.Replace(httpManifest("anon", "1.0.0", "Anon"), `"publisher":"Tests",`, "", 1), nil)
	if _, _, err := PublishWith(w.reg, data, time.Now(), PublishOptions{Sign: w.key}); Code(err) != CodeSignature || !strings.Contains(err.Error(), "no publisher") {
		t.Fatalf("signing a package without publisher: %v", err)
	}
	if _, err := os.Stat(w.reg); err == nil {
		t.Errorf("a refused publish wrote the index")
	}
	w.publish("plain", "1.0.0", "Plain Co", nil)
	ip, err := w.pr.Add(context.Background(), "plain", AddOptions{})
	if err != nil || ip.Entry.Signature != nil {
		t.Fatalf("%+v %v", ip, err)
	}
}

// A signed file added by path is checked against the .minisig beside it.
func TestSignedFileSpec(t *testing.T) {
	w := newSignWorld(t)
	w.publish("acme", "1.0.0", "Acme Inc.", w.key)
	file := filepath.Join(filepath.Dir(w.reg), "packages", "acme-1.0.0.halotool")
	// The .minisig beside a file carries no public key: trust the key first.
	k, _ := NewPublisherKey("Acme Inc.", w.key.PublicKey())
	if _, err := w.pr.AddKey(k, ""); err != nil {
		t.Fatal(err)
	}
	ip, err := w.pr.Add(context.Background(), file, AddOptions{})
	if err != nil || ip.Entry.Signature == nil {
		t.Fatalf("%+v %v", ip, err)
	}
	sig, _ := os.ReadFile(file + SignatureExt)
	os.WriteFile(file+SignatureExt, []byte(strings.Replace(string(sig), "trusted comment: timestamp", "trusted comment: timestamq", 1)), 0o644)
	_, err = w.pr.Add(context.Background(), file, AddOptions{})
	wantCode(t, err, CodeSignature, "does not verify")
}

func flip(c string) string {
	if c == "A" {
		return "B"
	}
	return "A"
}

func readIndex(t *testing.T, p string) *Index {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := ParseIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func writeIndex(t *testing.T, p string, idx *Index) {
	t.Helper()
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, b, 0o644)
}

// A package added by URL is checked against the .minisig beside it on the same server (the
// query string, a token say, stays after the path).
func TestSignedURLSpec(t *testing.T) {
	w := newSignWorld(t)
	w.publish("acme", "1.0.0", "Acme Inc.", w.key)
	dir := filepath.Dir(w.reg)
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path+"?"+r.URL.RawQuery)
		http.FileServer(http.Dir(dir)).ServeHTTP(rw, r)
	}))
	defer srv.Close()
	w.pr.Registries.Client = srv.Client()
	k, _ := NewPublisherKey("Acme Inc.", w.key.PublicKey())
	if _, err := w.pr.AddKey(k, ""); err != nil {
		t.Fatal(err)
	}
	ip, err := w.pr.Add(context.Background(), srv.URL+"/packages/acme-1.0.0.halotool?v=1", AddOptions{})
	if err != nil || ip.Entry.Signature == nil {
		t.Fatalf("%+v %v", ip, err)
	}
	if len(asked) != 2 || asked[1] != "/packages/acme-1.0.0.halotool.minisig?v=1" {
		t.Errorf("requests %v", asked)
	}
	// Without its signature, a package of a publisher that signs is refused.
	os.Remove(filepath.Join(dir, "packages", "acme-1.0.0.halotool.minisig"))
	before := w.state()
	_, err = w.pr.Add(context.Background(), srv.URL+"/packages/acme-1.0.0.halotool", AddOptions{})
	wantCode(t, err, CodeSignature, "is not signed")
	if w.state() != before {
		t.Errorf("a refused add changed the disk")
	}
}
