package pool

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"time"
)

// A Keyer makes a member's key as Key does (kind, then a digest of the parts), from parts
// written one by one in an encoding of its own instead of JSON: for openers that make a key
// on every run (a warm server's Workspace and Bash, five in a run that offers them), where
// encoding the parts as JSON was most of the key's cost. Each part is tagged and
// length-prefixed, so two different sequences of parts never write the same bytes. Like
// Key's, the key holds no secret in clear: Env's values go into the digest only.
type Keyer struct {
	kind string
	buf  []byte
	err  error
}

// NewKeyer starts a key of the sort kind ("bash", "workspace").
func NewKeyer(kind string) *Keyer { return &Keyer{kind: kind, buf: make([]byte, 0, 512)} }

// Part tags: a part's first byte says what follows.
const (
	tagString byte = iota + 1
	tagTrue
	tagFalse
	tagNil
	tagNumber
	tagList
	tagObject
	tagJSON
	tagEnv
)

func (k *Keyer) str(s string) {
	k.buf = binary.AppendUvarint(k.buf, uint64(len(s)))
	k.buf = append(k.buf, s...)
}

// String adds s.
func (k *Keyer) String(s string) *Keyer {
	k.buf = append(k.buf, tagString)
	k.str(s)
	return k
}

// Bool adds b.
func (k *Keyer) Bool(b bool) *Keyer {
	if b {
		k.buf = append(k.buf, tagTrue)
	} else {
		k.buf = append(k.buf, tagFalse)
	}
	return k
}

// Duration adds d.
func (k *Keyer) Duration(d time.Duration) *Keyer { return k.Value(float64(d)) }

// Value adds v, a value as encoding/json decodes one (string, float64, bool, nil, []any,
// map[string]any, and []string), maps with their keys sorted; any other value is added as
// its JSON.
func (k *Keyer) Value(v any) *Keyer {
	switch v := v.(type) {
	case string:
		k.String(v)
	case bool:
		k.Bool(v)
	case nil:
		k.buf = append(k.buf, tagNil)
	case float64:
		k.buf = append(k.buf, tagNumber)
		k.buf = binary.BigEndian.AppendUint64(k.buf, math.Float64bits(v))
	case []any:
		k.buf = append(k.buf, tagList)
		k.buf = binary.AppendUvarint(k.buf, uint64(len(v)))
		for _, x := range v {
			k.Value(x)
		}
	case []string:
		k.buf = append(k.buf, tagList)
		k.buf = binary.AppendUvarint(k.buf, uint64(len(v)))
		for _, x := range v {
			k.String(x)
		}
	case map[string]any:
		k.buf = append(k.buf, tagObject)
		k.buf = binary.AppendUvarint(k.buf, uint64(len(v)))
		var small [8]string
		keys := small[:0]
		for name := range v {
			keys = append(keys, name)
		}
		slices.Sort(keys)
		for _, name := range keys {
			k.str(name)
			k.Value(v[name])
		}
	default:
		b, err := json.Marshal(v)
		if err != nil && k.err == nil {
			k.err = err
		}
		k.buf = append(k.buf, tagJSON)
		k.str(string(b))
	}
	return k
}

// Env adds the variables names as getenv reads them: each name, whether it is set, and its
// value (in the digest only), as Env does for Key.
func (k *Keyer) Env(names []string, getenv func(string) (string, bool)) *Keyer {
	k.buf = append(k.buf, tagEnv)
	k.buf = binary.AppendUvarint(k.buf, uint64(len(names)))
	for _, name := range names {
		v, ok := "", false
		if getenv != nil {
			v, ok = getenv(name)
		}
		k.str(name)
		k.Bool(ok)
		k.str(v)
	}
	return k
}

// Key returns the key: kind, ":", and the hex sha256 of the parts. The error is the first
// part that could not be encoded.
func (k *Keyer) Key() (string, error) {
	if k.err != nil {
		return "", k.err
	}
	sum := sha256.Sum256(k.buf)
	out := make([]byte, 0, len(k.kind)+1+hex.EncodedLen(len(sum)))
	out = append(append(out, k.kind...), ':')
	return string(hex.AppendEncode(out, sum[:])), nil
}

// Parts returns the parts as written, not digested: a key for a cache the process keeps to
// itself (what a declaration's arguments parse to), where hashing them would cost more than
// it hides.
func (k *Keyer) Parts() (string, error) {
	if k.err != nil {
		return "", k.err
	}
	return string(k.buf), nil
}
