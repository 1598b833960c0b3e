package plan

import "testing"

// TestMoney: a price reads as written, and a small cost never reads as free.
func TestMoney(t *testing.T) {
	for f, want := range map[float64]string{0: "$0.0000", 0.0000322: "$0.000032", 0.00297735: "$0.0030", 12.3456789: "$12.3457"} {
		if got := usd(f); got != want {
			t.Errorf("usd(%v) = %s, want %s", f, got, want)
		}
	}
	for f, want := range map[float64]string{0.15: "0.15", 2.5: "2.50", 10: "10.00", 0.075: "0.075", 0: "0.00"} {
		if got := trimFloat(f); got != want {
			t.Errorf("trimFloat(%v) = %s, want %s", f, got, want)
		}
	}
}
