// Command benchreplay is scripts/bench-agent.sh's HTTP floor: it posts the request bodies a
// conversation sent (files, in order) to a URL again, on one keep-alive connection with
// net/http, n times, and the first body alone n times, and prints the median of each in
// milliseconds as JSON: {"all": ms, "first": ms}. The difference is what the requests cost on
// the wire and in the server, without any framework around them.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"time"
)

func main() {
	n := flag.Int("n", 20, "how many times to post the bodies")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchreplay [-n N] URL BODY...")
		os.Exit(2)
	}
	url := flag.Arg(0)
	var bodies [][]byte
	for _, f := range flag.Args()[1:] {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		bodies = append(bodies, b)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	post := func(b []byte) {
		resp, err := client.Post(url, "application/json", bytes.NewReader(b))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	timed := func(bs [][]byte) float64 {
		var ms []float64
		for i := 0; i < *n; i++ {
			t := time.Now()
			for _, b := range bs {
				post(b)
			}
			ms = append(ms, float64(time.Since(t).Microseconds())/1000)
		}
		sort.Float64s(ms)
		return ms[len(ms)/2]
	}
	post(bodies[0]) // connect
	all, first := timed(bodies), timed(bodies[:1])
	json.NewEncoder(os.Stdout).Encode(map[string]float64{"all": all, "first": first})
}
