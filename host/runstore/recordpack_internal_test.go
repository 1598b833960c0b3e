package runstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// The dictionary is part of what the stores on users' disks hold: a record packed with it
// is unpacked with it. A better one is a new file behind a new first byte.
func TestRecordDictUnchanged(t *testing.T) {
	sum := sha256.Sum256(recordDict1)
	if got := hex.EncodeToString(sum[:]); got != "9f5326afdf7348132f60d085598ea456371c4f1ec940fe19b9ceab10377768e2" {
		t.Fatalf("recorddict1.json changed (sha256 %s): the records packed with it could no longer be read", got)
	}
}

func TestPackRecordRoundTrip(t *testing.T) {
	big := `{"runId":"x","output":"` + strings.Repeat("a tool's long answer, ", 5000) + `"}`
	for name, raw := range map[string]string{
		"bench":  BenchRecord,
		"small":  `{"runId":"a"}`,
		"empty":  ``,
		"large":  big,
		"binary": "{\x00\xff\xfe" + strings.Repeat("\x01\x02", 300),
	} {
		packed := packRecord([]byte(raw))
		if packed[0] != packedV1 {
			t.Errorf("%s: packed begins with %#x", name, packed[0])
		}
		back, err := unpackRecord(packed)
		if err != nil || string(back) != raw {
			t.Errorf("%s: unpacked %d bytes of %d, %v", name, len(back), len(raw), err)
		}
	}
	if n := len(packRecord([]byte(BenchRecord))); n*3 > len(BenchRecord) {
		t.Errorf("the benchmark's record packs to %d bytes of %d: the dictionary no longer fits records", n, len(BenchRecord))
	}
}

// Rows written before schema step 13, and any JSON, are read as they are.
func TestUnpackRecordJSONAsIs(t *testing.T) {
	for _, raw := range []string{BenchRecord, " {\"runId\":\"a\"}", "{}"} {
		back, err := unpackRecord([]byte(raw))
		if err != nil || !bytes.Equal(back, []byte(raw)) {
			t.Errorf("%q: %q %v", raw, back, err)
		}
	}
}

// What a planted or damaged store may hold in place of a record: each is refused with
// errPackedRecord, and none makes the reader allocate what it claims.
func TestUnpackRecordRefuses(t *testing.T) {
	good := packRecord([]byte(BenchRecord))
	huge := binary.AppendUvarint([]byte{packedV1}, 1<<31)
	huge = append(huge, good[3:]...)
	for name, stored := range map[string][]byte{
		"a newer packing":      append([]byte{0x02}, good[1:]...),
		"cut short":            good[:len(good)/2],
		"bytes changed":        append(append([]byte{}, good[:10]...), bytes.Repeat([]byte{0xff}, len(good)-10)...),
		"claims 2 GiB":         huge,
		"a length and nothing": {packedV1, 0x80},
	} {
		back, err := unpackRecord(stored)
		if !errors.Is(err, errPackedRecord) || back != nil {
			t.Errorf("%s: %d bytes, %v", name, len(back), err)
		}
	}
}

func BenchmarkPackRecord(b *testing.B) {
	raw := []byte(BenchRecord)
	b.ReportAllocs()
	for range b.N {
		packRecord(raw)
	}
}

func BenchmarkUnpackRecord(b *testing.B) {
	packed := packRecord([]byte(BenchRecord))
	b.ReportAllocs()
	for range b.N {
		if _, err := unpackRecord(packed); err != nil {
			b.Fatal(err)
		}
	}
}

// The buffers a record is encoded and packed in go on to the next record: what a record
// keeps is its own, not part of them, whatever the sizes of the records after it.
func TestEncodedRecordsOwnTheirBytes(t *testing.T) {
	var bufs sync.Pool
	var ps []*pending
	var want [][]byte
	for i, out := range []string{"short", strings.Repeat("a much longer answer ", 400), "x", strings.Repeat("z", 9000)} {
		rec := oneStage()
		rec.RunID = fmt.Sprintf("run-%d", i)
		rec.Output = out
		raw, err := appendRecord(nil, rec)
		if err != nil {
			t.Fatal(err)
		}
		p := &pending{id: rec.RunID, rec: rec}
		p.encode(&bufs)
		if p.err != nil {
			t.Fatal(p.err)
		}
		ps, want = append(ps, p), append(want, raw)
	}
	for i, p := range ps {
		if back, err := unpackRecord(p.data); err != nil || !bytes.Equal(back, want[i]) {
			t.Errorf("record %d after the others were encoded: %d bytes back of %d (%v)", i, len(back), len(want[i]), err)
		}
		if cap(p.data) != len(p.data) {
			t.Errorf("record %d keeps %d bytes for %d", i, cap(p.data), len(p.data))
		}
	}
}
