package runstore

import (
	_ "embed"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/s2"
)

// How the embedded store keeps a record: its JSON compressed with S2
// (github.com/klauspost/compress/s2) against a dictionary of a record's shape, behind one
// byte that says so (packedV1). A record of scripts/bench-mcp.sh's call is 1,279 bytes of
// JSON and 284 packed, and its row's commit then writes 2,190 bytes rather than 5,200 (the
// write-ahead log's pages, then the checkpoint's copies of them: BenchmarkCommitLayout's
// written-B/op); packing it costs about 1.3 µs, reading it back 0.4 µs. Four rounds of
// BenchmarkToolsCallPaired alternated with the store before (docs/mcp.md, "Records
// packed") took 2 to 5% less of Halo's processor time against mcp-go's.
//
// Rows written before schema step 13, and PostgreSQL's, are the JSON itself, which begins
// with '{' and is read as it is. The dictionary is part of the format: a record packed with
// it is read with it. Never change recorddict1.json (TestRecordDictUnchanged); a better one
// is another file behind another first byte.

// packedV1 is the first byte of a record packed with recorddict1.json.
const packedV1 = 0x01

//go:embed recorddict1.json
var recordDict1 []byte

// packDict is recordDict1 made ready for S2, once, on the first record packed or read.
var packDict = sync.OnceValue(func() *s2.Dict { return s2.MakeDict(recordDict1, nil) })

// packRecord returns the packed form of a record's JSON.
func packRecord(raw []byte) []byte {
	packed, _ := packRecordInto(nil, raw)
	return packed
}

// packRecordInto returns the packed form of a record's JSON in memory of its own, its
// length exactly, and the scratch buffer S2 wrote it into first (scratch, or a larger one
// when that is too small): S2 needs room for more than the JSON's length, and the packed
// form is a fraction of it.
func packRecordInto(scratch, raw []byte) (packed, grown []byte) {
	if n := s2.MaxEncodedLen(len(raw)); cap(scratch) < n {
		scratch = make([]byte, n)
	}
	enc := packDict().Encode(scratch[:cap(scratch)], raw)
	packed = make([]byte, 1+len(enc))
	packed[0] = packedV1
	copy(packed[1:], enc)
	return packed, scratch
}

// maxUnpacked bounds what one packed record may unpack to: a few bytes of a planted store
// could otherwise say gigabytes (JSON rows are as large on disk as in memory).
const maxUnpacked = 256 << 20

// errPackedRecord says a stored record is neither JSON nor of a packing this halo knows.
var errPackedRecord = errors.New("not a record this halo can read (neither JSON nor packed as it packs them)")

// unpackRecord returns the JSON of a stored record: a packed one unpacked, JSON as it is.
// A first byte below a space, which JSON never begins with, is a packing: one of a newer
// halo is refused here (its store's schema is refused first, as newer than this halo's).
func unpackRecord(stored []byte) ([]byte, error) {
	if len(stored) == 0 || stored[0] >= ' ' {
		return stored, nil
	}
	if stored[0] != packedV1 {
		return nil, fmt.Errorf("%w: packing %d", errPackedRecord, stored[0])
	}
	n, err := s2.DecodedLen(stored[1:])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errPackedRecord, err)
	}
	if n > maxUnpacked {
		return nil, fmt.Errorf("%w: it says it unpacks to %d bytes, more than the %d a record may have", errPackedRecord, n, maxUnpacked)
	}
	raw, err := packDict().Decode(nil, stored[1:])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errPackedRecord, err)
	}
	return raw, nil
}
