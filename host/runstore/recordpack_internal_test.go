package runstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
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

// The buffers a record is encoded and packed in go on to the next record (the request's
// pool, the commit's room to pack): what a record keeps once its commit has packed it is its
// own, not part of them, whatever the sizes of the records after it; until then its JSON is
// in a buffer of its own.
func TestEncodedRecordsOwnTheirBytes(t *testing.T) {
	c := &commits{}
	var want [][]byte
	var all []*pending
	for round, outs := range [][]string{{"short", strings.Repeat("a much longer answer ", 400)}, {"x", strings.Repeat("z", 9000)}} {
		batch := map[string]*pending{}
		for i, out := range outs {
			rec := oneStage()
			rec.RunID = fmt.Sprintf("run-%d-%d", round, i)
			rec.Output = out
			raw, err := appendRecord(nil, rec)
			if err != nil {
				t.Fatal(err)
			}
			p := &pending{id: rec.RunID, rec: rec}
			p.encode(&c.bufs)
			if p.err != nil || !p.encoded {
				t.Fatal(p.err)
			}
			if !bytes.Equal(p.raw, raw) {
				t.Errorf("record %s's JSON before its commit: %d bytes of %d", p.id, len(p.raw), len(raw))
			}
			batch[p.id] = p
			all, want = append(all, p), append(want, raw)
		}
		for _, p := range all[len(all)-len(outs):] {
			for _, q := range all[len(all)-len(outs):] {
				if p != q && p.buf == q.buf {
					t.Fatalf("records %s and %s share a buffer before their commit", p.id, q.id)
				}
			}
		}
		c.packAll(batch)
	}
	for i, p := range all {
		if p.raw != nil || p.buf != nil {
			t.Errorf("record %s kept its JSON's buffer after it was packed", p.id)
		}
		if back, err := unpackRecord(p.data); err != nil || !bytes.Equal(back, want[i]) {
			t.Errorf("record %s after the others were encoded: %d bytes back of %d (%v)", p.id, len(back), len(want[i]), err)
		}
		if cap(p.data) != len(p.data) {
			t.Errorf("record %s keeps %d bytes for %d", p.id, cap(p.data), len(p.data))
		}
	}
}
