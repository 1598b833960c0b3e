package pkgmgr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// RegistryFormat is the format tag of a registry index.
const RegistryFormat = "halo-registry/1"

// DefaultRegistry is the source name of the registry that ships with Halo.
const DefaultRegistry = "default"

// An Index is a registry's index.json.
type Index struct {
	Format   string                   `json:"format"`
	Packages map[string]*IndexPackage `json:"packages"`
}

// An IndexPackage is one package of an index, with every published version.
type IndexPackage struct {
	Description string `json:"description"`
	Publisher   string `json:"publisher,omitempty"`
	// Homepage and License are the latest version's manifest's, for halo search.
	Homepage string                   `json:"homepage,omitempty"`
	License  string                   `json:"license,omitempty"`
	Latest   string                   `json:"latest"`
	Versions map[string]*IndexVersion `json:"versions"`
}

// An IndexVersion is one published version.
type IndexVersion struct {
	// File is the .halotool, relative to the index or an absolute https URL.
	File        string      `json:"file"`
	SHA256      string      `json:"sha256"`
	Providers   []string    `json:"providers"`
	Permissions Permissions `json:"permissions"`
	PublishedAt string      `json:"publishedAt"`
	// Signature is the publisher's signature of the file, when it is signed.
	Signature *Signature `json:"signature,omitempty"`
}

// ParseIndex reads an index.json.
func ParseIndex(data []byte) (*Index, error) {
	var idx Index
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, &Error{Code: CodeRegistry, Message: "registry index is not valid JSON", Err: err}
	}
	if idx.Format != RegistryFormat {
		return nil, errorf(CodeRegistry, "registry index format %q: want %q", idx.Format, RegistryFormat)
	}
	if idx.Packages == nil {
		idx.Packages = map[string]*IndexPackage{}
	}
	for name, p := range idx.Packages {
		if p == nil || p.Versions == nil {
			return nil, errorf(CodeRegistry, "registry index: package %q has no versions", name)
		}
	}
	return &idx, nil
}

// Marshal encodes the index as stored: indented, keys sorted, a final newline.
func (idx *Index) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Lookup finds a version: "" means the package's latest.
func (idx *Index) Lookup(name, version string) (*IndexPackage, string, *IndexVersion, error) {
	p, ok := idx.Packages[name]
	if !ok {
		return nil, "", nil, errorf(CodeNotFound, "the registry has no package %q; try halo search", name)
	}
	if version == "" {
		version = p.Latest
	}
	v, ok := p.Versions[version]
	if !ok {
		return nil, "", nil, errorf(CodeNotFound, "the registry has no version %s of %s (versions: %s)", version, name, strings.Join(sortedVersions(p.Versions), ", "))
	}
	return p, version, v, nil
}

func sortedVersions(m map[string]*IndexVersion) []string {
	out := sortedKeys(m)
	sort.Slice(out, func(i, j int) bool { return CompareVersions(out[i], out[j]) < 0 })
	return out
}

// A Registry is a halo-registry/1 index and the package files beside it, on disk, over https,
// or the one that ships with Halo.
type Registry struct {
	// Source is how halo.lock names the registry: "default", or the path or URL as given.
	Source string
	read   func(ctx context.Context, rel string) ([]byte, error)
	client *http.Client
	index  string // the index's name for read
}

// RegistryOptions say how to reach registries.
type RegistryOptions struct {
	// Client fetches https registries and package URLs.
	Client *http.Client
	// Dir is the folder a relative registry path is resolved against.
	Dir string
	// Default is the registry that ships with Halo: an fs.FS holding index.json and packages/.
	Default fs.FS
}

// OpenRegistry opens the registry at loc: "" or "default" for the one that ships with Halo,
// an https:// URL of an index.json (http:// only on localhost), or a path to an index.json or
// to the folder holding it. Nothing is read yet.
func OpenRegistry(loc string, opts RegistryOptions) (*Registry, error) {
	r := &Registry{Source: loc, client: opts.Client}
	switch {
	case loc == "" || loc == DefaultRegistry:
		if opts.Default == nil {
			return nil, errorf(CodeRegistry, "this halo build has no default registry")
		}
		r.Source, r.index = DefaultRegistry, "index.json"
		r.read = func(_ context.Context, rel string) ([]byte, error) {
			b, err := fs.ReadFile(opts.Default, rel)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, errorf(CodeNotFound, "the default registry has no file %s", rel)
			}
			return b, err
		}
		return r, nil
	case strings.Contains(loc, "://"):
		u, err := CheckDownloadURL(loc)
		if err != nil {
			return nil, err
		}
		r.index = u.String()
		r.read = func(ctx context.Context, rel string) ([]byte, error) {
			ref, err := url.Parse(rel)
			if err != nil {
				return nil, wrapf(CodeRegistry, err, "bad file name %q", rel)
			}
			return r.download(ctx, u.ResolveReference(ref).String())
		}
		return r, nil
	}
	p := loc
	if !filepath.IsAbs(p) {
		p = filepath.Join(opts.Dir, p)
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		p = filepath.Join(p, "index.json")
	}
	dir := filepath.Dir(p)
	r.index = filepath.Base(p)
	r.read = func(_ context.Context, rel string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, wrapf(CodeNotFound, err, "registry %s", loc)
		}
		return b, err
	}
	return r, nil
}

// CheckDownloadURL parses a registry or package URL: https, or http only on localhost.
func CheckDownloadURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return nil, errorf(CodeRegistry, "%q is not a URL", s)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !IsLoopback(u.Hostname()) {
			return nil, errorf(CodeRegistry, "%s: plain http:// is refused except on localhost; use https://", s)
		}
	default:
		return nil, errorf(CodeRegistry, "%s: want an https:// URL", s)
	}
	return u, nil
}

// Index reads and parses the index.
func (r *Registry) Index(ctx context.Context) (*Index, error) {
	b, err := r.read(ctx, r.index)
	if err != nil {
		if Code(err) != "" {
			return nil, err
		}
		return nil, wrapf(CodeRegistry, err, "read registry %s", r.Source)
	}
	return ParseIndex(b)
}

// Fetch reads a version's file: relative to the index, or an absolute https URL.
func (r *Registry) Fetch(ctx context.Context, file string) ([]byte, error) {
	if strings.Contains(file, "://") {
		if _, err := CheckDownloadURL(file); err != nil {
			return nil, err
		}
		return r.download(ctx, file)
	}
	if checkFilePath(file) != nil {
		return nil, errorf(CodeRegistry, "registry %s: file %q leaves the registry folder", r.Source, file)
	}
	rel := file
	if !strings.Contains(r.index, "://") {
		rel = path.Join(path.Dir(filepath.ToSlash(r.index)), file)
	}
	b, err := r.read(ctx, rel)
	if err != nil {
		if Code(err) != "" {
			return nil, err
		}
		return nil, wrapf(CodeNetwork, err, "read %s", file)
	}
	return b, nil
}

func (r *Registry) download(ctx context.Context, u string) ([]byte, error) {
	return Download(ctx, r.client, u)
}

// Download GETs u with client, up to MaxFileSize bytes. Every redirect is checked with the
// rule the first URL was (CheckDownloadURL: https, or http only on localhost), and never
// from https to plain http; no hop sends a Referer, which would carry a token in the previous
// URL's query to the next host.
func Download(ctx context.Context, client *http.Client, u string) ([]byte, error) {
	if client == nil {
		return nil, errorf(CodeNetwork, "no HTTP client to fetch %s", u)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, wrapf(CodeNetwork, err, "GET %s", u)
	}
	c := *client
	c.CheckRedirect = checkRedirect
	resp, err := c.Do(req)
	if err != nil {
		var refused *Error
		if errors.As(err, &refused) {
			return nil, &Error{Code: refused.Code, Message: fmt.Sprintf("GET %s: redirected: %s", u, refused.Message)}
		}
		return nil, wrapf(CodeNetwork, err, "GET %s", u)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, errorf(CodeNotFound, "GET %s: 404 Not Found", u)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errorf(CodeNetwork, "GET %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxFileSize+1))
	if err != nil {
		return nil, wrapf(CodeNetwork, err, "GET %s", u)
	}
	if len(b) > MaxFileSize {
		return nil, errorf(CodeInvalid, "GET %s: more than the %d MiB limit", u, MaxFileSize>>20)
	}
	return b, nil
}

// maxRedirects bounds the redirects of one download, as net/http's default does.
const maxRedirects = 10

// checkRedirect is Download's redirect rule.
func checkRedirect(req *http.Request, via []*http.Request) error {
	req.Header.Del("Referer")
	if len(via) >= maxRedirects {
		return errorf(CodeNetwork, "stopped after %d redirects", maxRedirects)
	}
	if _, err := CheckDownloadURL(req.URL.String()); err != nil {
		return err
	}
	if via[len(via)-1].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return errorf(CodeRegistry, "%s: a redirect from https:// to plain http:// is refused", req.URL.Redacted())
	}
	return nil
}

// Publish adds a packed file to the index at indexPath on disk (created when missing): it
// copies the file to packages/<name>-<version>.halotool beside the index and records its
// sha256, providers, permissions and the time. A version already published is refused;
// latest moves only forward.
func Publish(indexPath string, data []byte, now time.Time) (*Package, *IndexVersion, error) {
	return PublishWith(indexPath, data, now, PublishOptions{})
}

// PublishOptions configure PublishWith.
type PublishOptions struct {
	// Sign, when set, signs the package: the signature goes into the index and into
	// packages/<name>-<version>.halotool.minisig beside the file (see sign.go).
	Sign *SignKey
}

// PublishWith is Publish with options.
func PublishWith(indexPath string, data []byte, now time.Time, opts PublishOptions) (*Package, *IndexVersion, error) {
	pkg, err := ReadPackage(data)
	if err != nil {
		return nil, nil, err
	}
	if st, err := os.Stat(indexPath); err == nil && st.IsDir() {
		indexPath = filepath.Join(indexPath, "index.json")
	}
	idx := &Index{Format: RegistryFormat, Packages: map[string]*IndexPackage{}}
	old, err := os.ReadFile(indexPath)
	switch {
	case err == nil:
		if idx, err = ParseIndex(old); err != nil {
			return nil, nil, err
		}
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	default:
		return nil, nil, fmt.Errorf("read index: %w", err)
	}
	m := pkg.Manifest
	entry := idx.Packages[m.Name]
	if entry == nil {
		entry = &IndexPackage{Versions: map[string]*IndexVersion{}}
		idx.Packages[m.Name] = entry
	}
	if _, ok := entry.Versions[m.Version]; ok {
		return nil, nil, errorf(CodeExists, "%s@%s is already published; bump the version", m.Name, m.Version)
	}
	rel := "packages/" + pkg.FileName()
	target := filepath.Join(filepath.Dir(indexPath), filepath.FromSlash(rel))
	if prev, err := os.ReadFile(target); err == nil && !bytes.Equal(prev, data) {
		return nil, nil, errorf(CodeExists, "%s exists with other contents; remove it or bump the version", target)
	}
	v := &IndexVersion{
		File: rel, SHA256: pkg.SHA256, Providers: m.ProviderNames(), Permissions: pkg.Permissions(),
		PublishedAt: now.UTC().Format("2006-01-02T15:04:05.000Z"),
	}
	if opts.Sign != nil {
		if v.Signature, err = opts.Sign.signPackage(pkg, now); err != nil {
			return nil, nil, err
		}
	}
	entry.Versions[m.Version] = v
	if entry.Latest == "" || CompareVersions(m.Version, entry.Latest) > 0 {
		entry.Latest = m.Version
		entry.Description, entry.Publisher, entry.Homepage, entry.License = m.Description, m.Publisher, m.Homepage, m.License
	}
	out, err := idx.Marshal()
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return nil, nil, err
	}
	if err := writeAtomic(target, data, 0o644); err != nil {
		return nil, nil, err
	}
	if v.Signature != nil {
		if err := writeAtomic(target+SignatureExt, []byte(v.Signature.Minisig), 0o644); err != nil {
			os.Remove(target)
			return nil, nil, err
		}
	}
	if err := writeAtomic(indexPath, out, 0o644); err != nil {
		os.Remove(target)
		if v.Signature != nil {
			os.Remove(target + SignatureExt)
		}
		return nil, nil, err
	}
	return pkg, v, nil
}

// writeAtomic writes data to a temporary file beside target and renames it into place.
func writeAtomic(target string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(target), ".tmp-"+filepath.Base(target)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, mode)
	}
	if werr == nil {
		werr = os.Rename(tmp, target)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", target, werr)
	}
	return nil
}

// CompareVersions orders two valid versions by semver precedence: -1, 0 or 1.
func CompareVersions(a, b string) int {
	am, ap, _ := strings.Cut(a, "-")
	bm, bp, _ := strings.Cut(b, "-")
	an, bn := strings.Split(am, "."), strings.Split(bm, ".")
	for i := 0; i < 3 && i < len(an) && i < len(bn); i++ {
		if c := compareNum(an[i], bn[i]); c != 0 {
			return c
		}
	}
	switch {
	case ap == "" && bp == "":
		return 0
	case ap == "":
		return 1
	case bp == "":
		return -1
	}
	as, bs := strings.Split(ap, "."), strings.Split(bp, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		_, aerr := strconv.Atoi(as[i])
		_, berr := strconv.Atoi(bs[i])
		var c int
		switch {
		case aerr == nil && berr == nil:
			c = compareNum(as[i], bs[i])
		case aerr == nil:
			c = -1
		case berr == nil:
			c = 1
		default:
			c = strings.Compare(as[i], bs[i])
		}
		if c != 0 {
			return c
		}
	}
	return compareInt(len(as), len(bs))
}

func compareNum(a, b string) int {
	if len(a) != len(b) {
		return compareInt(len(a), len(b))
	}
	return strings.Compare(a, b)
}

func compareInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
