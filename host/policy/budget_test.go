package policy

import (
	"errors"
	"math"
	"sync"
	"testing"
)

func TestReserveCapsReply(t *testing.T) {
	s := set(t, []RuleSpec{r("MaxSpend", 0.50)})
	b := NewBudget()
	// $0.10 prompt, $0.001 per output token: $0.40 left buys 400 tokens.
	res, err := s.Reserve(b, Estimate{InputUSD: 0.10, OutputUSDPerToken: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	if res.MaxTokens != 400 || math.Abs(res.Amount-0.50) > 1e-9 {
		t.Fatalf("MaxTokens %d Amount %v", res.MaxTokens, res.Amount)
	}
	// A lower cap of the caller's own wins.
	b2 := NewBudget()
	res2, _ := s.Reserve(b2, Estimate{InputUSD: 0.10, OutputUSDPerToken: 0.001, MaxTokens: 50})
	if res2.MaxTokens != 50 {
		t.Fatalf("MaxTokens %d", res2.MaxTokens)
	}
	// While the first call is in flight at its most, nothing is left.
	if _, err := s.Reserve(b, Estimate{InputUSD: 0.01, OutputUSDPerToken: 0.001}); err == nil {
		t.Fatal("second call reserved while the budget is fully in flight")
	}
	// It settles for less; the rest is free again.
	if err := res.Settle(0.20); err != nil {
		t.Fatal(err)
	}
	if err := res.Settle(0.20); err != nil || b.Spent() != 0.20 {
		t.Fatalf("second Settle counted: spent %v", b.Spent())
	}
	res3, err := s.Reserve(b, Estimate{InputUSD: 0.05, OutputUSDPerToken: 0.001})
	if err != nil || res3.MaxTokens != 250 {
		t.Fatalf("MaxTokens %v err %v", res3, err)
	}
	// Going over the limit fails after the call; then every call fails before.
	err = res3.Settle(0.31)
	var v *Violation
	if !errors.As(err, &v) || v.Rule != "MaxSpend" {
		t.Fatalf("Settle over limit: %v", err)
	}
	if _, err := s.Reserve(b, Estimate{OutputUSDPerToken: 0.001}); err == nil {
		t.Fatal("reserved past the limit")
	}
}

func TestReserveTooLittleLeft(t *testing.T) {
	s := set(t, []RuleSpec{r("MaxSpend", 0.01)})
	if _, err := s.Reserve(NewBudget(), Estimate{InputUSD: 0.02, OutputUSDPerToken: 0.001}); err == nil {
		t.Error("prompt costing more than the budget reserved")
	}
	if _, err := s.Reserve(NewBudget(), Estimate{InputUSD: 0.0095, OutputUSDPerToken: 0.001}); err == nil {
		t.Error("reserved with no room for one token")
	}
}

func TestReserveWithoutLimit(t *testing.T) {
	b := NewBudget()
	res, err := (Set{}).Reserve(b, Estimate{InputUSD: 1, OutputUSDPerToken: 0.01, MaxTokens: 100})
	if err != nil || res.MaxTokens != 100 || b.InFlight() != 2 {
		t.Fatalf("%+v %v in flight %v", res, err, b.InFlight())
	}
	if err := res.Settle(1.5); err != nil || b.Spent() != 1.5 || b.InFlight() != 0 {
		t.Fatalf("spent %v in flight %v", b.Spent(), b.InFlight())
	}
}

// Parallel calls each reserve their worst case, so together they never spend more than
// the limit, whatever order they run in.
func TestParallelCallsCannotOverspend(t *testing.T) {
	s := set(t, []RuleSpec{r("MaxSpend", 1.0)})
	b := NewBudget()
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Reserve(b, Estimate{InputUSD: 0.01, OutputUSDPerToken: 0.0001, MaxTokens: 400})
			if err != nil {
				return
			}
			// The worst case: the model uses every token it may.
			_ = res.Settle(0.01 + float64(res.MaxTokens)*0.0001)
		}()
	}
	wg.Wait()
	if b.Spent() > 1.0+1e-9 || b.InFlight() != 0 {
		t.Fatalf("spent %v, in flight %v", b.Spent(), b.InFlight())
	}
}
