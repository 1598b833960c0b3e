package store

import (
	"math"
	"runtime"
	"sort"
	"sync"
)

// Why vectors are scanned in memory rather than searched by sqlite-vec: modernc.org/sqlite
// ships sqlite-vec without cgo (modernc.org/sqlite/vec), but its vec0 tables (v0.1.9) have
// no approximate index either: a KNN query reads every vector from the database's pages and
// computes each distance in transpiled C. Holding the store's vectors as one float32 slice
// and scanning it in Go does the same exact search without the page reads and decoding;
// BenchmarkVectorSearch measures both, and docs/stores.md has the figures. SQLite keeps the
// vectors (float32 blobs) and everything else; the slice is loaded from it.

// vectors is a store's vectors in memory: normalised (so a dot product is the cosine
// similarity), one contiguous slice, with the row id of each.
type vectors struct {
	dim  int
	ids  []int64
	data []float32
	pos  map[int64]int
}

func newVectors(dim int) *vectors { return &vectors{dim: dim, pos: map[int64]int{}} }

// put adds or replaces the vector of id (normalised as it is copied in).
func (v *vectors) put(id int64, vec []float32) {
	i, ok := v.pos[id]
	if !ok {
		i = len(v.ids)
		v.ids = append(v.ids, id)
		v.data = append(v.data, make([]float32, v.dim)...)
		v.pos[id] = i
	}
	normalize(v.data[i*v.dim:(i+1)*v.dim], vec)
}

// remove drops id's vector: the last one takes its place.
func (v *vectors) remove(id int64) {
	i, ok := v.pos[id]
	if !ok {
		return
	}
	last := len(v.ids) - 1
	if i != last {
		copy(v.data[i*v.dim:(i+1)*v.dim], v.data[last*v.dim:])
		v.ids[i] = v.ids[last]
		v.pos[v.ids[i]] = i
	}
	v.ids = v.ids[:last]
	v.data = v.data[:last*v.dim]
	delete(v.pos, id)
}

func (v *vectors) len() int { return len(v.ids) }

// A scored row is a search result: a row id and its cosine similarity to the query.
type scored struct {
	id    int64
	score float32
}

// parallelFloats is how many floats a scan part holds at least before a search is split
// between goroutines.
const parallelFloats = 1 << 20

// search returns the k rows most similar to q (normalised), best first: an exact scan, split
// between the CPUs when the store is large.
func (v *vectors) search(q []float32, k int) []scored {
	n := len(v.ids)
	if k <= 0 || n == 0 {
		return nil
	}
	parts := min(runtime.GOMAXPROCS(0), len(v.data)/parallelFloats)
	if parts <= 1 {
		return topK(v.data, v.ids, v.dim, q, k)
	}
	results := make([][]scored, parts)
	var wg sync.WaitGroup
	per := (n + parts - 1) / parts
	for p := 0; p < parts; p++ {
		lo, hi := p*per, min((p+1)*per, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[p] = topK(v.data[lo*v.dim:hi*v.dim], v.ids[lo:hi], v.dim, q, k)
		}()
	}
	wg.Wait()
	var all []scored
	for _, r := range results {
		all = append(all, r...)
	}
	sort.Slice(all, func(i, j int) bool { return better(all[i], all[j]) })
	return all[:min(k, len(all))]
}

// better orders results: higher score first, then lower id, so ties come out the same way
// every time.
func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.id < b.id
}

// topK scans rows (each dim floats) for the k best scores against q.
func topK(data []float32, ids []int64, dim int, q []float32, k int) []scored {
	best := make([]scored, 0, k+1)
	q = q[:dim]
	for i, id := range ids {
		s := dot(data[i*dim:(i+1)*dim], q)
		if len(best) == k && !better(scored{id, s}, best[k-1]) {
			continue
		}
		j := len(best)
		best = append(best, scored{})
		for j > 0 && better(scored{id, s}, best[j-1]) {
			best[j] = best[j-1]
			j--
		}
		best[j] = scored{id, s}
		if len(best) > k {
			best = best[:k]
		}
	}
	return best
}

// dot is the dot product of a and b (b at least as long as a), eight products a round into
// four sums: the sums do not wait on each other, which is most of what makes it faster
// than a plain loop.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		x, y := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += x[0]*y[0] + x[4]*y[4]
		s1 += x[1]*y[1] + x[5]*y[5]
		s2 += x[2]*y[2] + x[6]*y[6]
		s3 += x[3]*y[3] + x[7]*y[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// normalize writes src scaled to length 1 into dst (a zero vector stays zero).
func normalize(dst, src []float32) {
	var sum float64
	for _, f := range src {
		sum += float64(f) * float64(f)
	}
	scale := float32(0)
	if sum > 0 {
		scale = float32(1 / math.Sqrt(sum))
	}
	for i, f := range src[:len(dst)] {
		dst[i] = f * scale
	}
}

// normalized returns a normalised copy of v.
func normalized(v []float32) []float32 {
	out := make([]float32, len(v))
	normalize(out, v)
	return out
}
