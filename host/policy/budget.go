package policy

import (
	"fmt"
	"math"
	"sync"
)

// A Budget is one run's spending ledger for MaxSpend: what the run's model calls have
// cost, and what the calls in flight may still cost at most. The runtime makes one per
// run; it is safe for concurrent use, so parallel calls (|* each, branches) cannot
// overspend: each call reserves its worst case before it starts and settles with its real
// cost after.
type Budget struct {
	mu       sync.Mutex
	spent    float64
	reserved float64
}

// NewBudget returns an empty ledger.
func NewBudget() *Budget { return &Budget{} }

// Spent returns what settled calls have cost, in USD.
func (b *Budget) Spent() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent
}

// InFlight returns the worst-case cost of the calls reserved and not yet settled.
func (b *Budget) InFlight() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reserved
}

// An Estimate describes a model call about to be made.
type Estimate struct {
	// InputUSD is what the prompt will cost (its tokens times the input price).
	InputUSD float64
	// OutputUSDPerToken is the model's price of one completion token.
	OutputUSDPerToken float64
	// MaxTokens is the reply cap the call would otherwise send (0: none).
	MaxTokens int
}

// A Reservation is a call's reserved worst case. Settle it exactly once.
type Reservation struct {
	// MaxTokens is the max_tokens to send: the reply cap that keeps the call inside what
	// is left of the budget (or Estimate.MaxTokens, when that is lower). 0 means no cap
	// is needed (the set has no MaxSpend and the caller gave none).
	MaxTokens int
	// Amount is the worst-case cost reserved, in USD.
	Amount float64

	b       *Budget
	limit   float64
	limited bool
	p       *Policy
	r       *rule
	once    sync.Once
}

// maxReplyTokens bounds a computed cap when output is very cheap.
const maxReplyTokens = math.MaxInt32

// Reserve checks the set's MaxSpend before a model call and reserves the call's worst
// case in b. It fails with a *Violation (phase output) once the run's cost, with the calls
// in flight counted at their most, has reached the limit, or when what is left cannot pay
// for the prompt and one completion token.
func (s Set) Reserve(b *Budget, e Estimate) (*Reservation, error) {
	res := &Reservation{b: b, MaxTokens: e.MaxTokens}
	s.each(kMaxSpend, func(p *Policy, r *rule) bool {
		if !res.limited || r.usd < res.limit {
			res.limit, res.limited, res.p, res.r = r.usd, true, p, r
		}
		return true
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	if !res.limited {
		res.Amount = e.InputUSD + float64(e.MaxTokens)*e.OutputUSDPerToken
		b.reserved += res.Amount
		return res, nil
	}
	committed := b.spent + b.reserved
	if committed >= res.limit {
		return nil, res.p.violation(res.r, Output, "the run has spent %s (%s more in flight) of its %s budget", usd(b.spent), usd(b.reserved), usd(res.limit))
	}
	left := res.limit - committed - e.InputUSD
	if left <= 0 {
		return nil, res.p.violation(res.r, Output, "%s is left of the %s budget, and the prompt alone costs %s", usd(res.limit-committed), usd(res.limit), usd(e.InputUSD))
	}
	if e.OutputUSDPerToken > 0 {
		fit := math.Floor(left / e.OutputUSDPerToken)
		if fit < 1 {
			return nil, res.p.violation(res.r, Output, "%s is left of the %s budget: not enough for a reply", usd(res.limit-committed), usd(res.limit))
		}
		if fit > maxReplyTokens {
			fit = maxReplyTokens
		}
		if res.MaxTokens == 0 || int(fit) < res.MaxTokens {
			res.MaxTokens = int(fit)
		}
	}
	res.Amount = e.InputUSD + float64(res.MaxTokens)*e.OutputUSDPerToken
	b.reserved += res.Amount
	return res, nil
}

// Settle replaces the reservation by the call's real cost. It fails with a *Violation
// when the run has gone over its limit (a prompt that cost more than estimated); a call
// that ends exactly at the limit passes, and the next Reserve fails. Settling twice
// does nothing.
func (r *Reservation) Settle(actualUSD float64) error {
	var v *Violation
	r.once.Do(func() {
		r.b.mu.Lock()
		defer r.b.mu.Unlock()
		r.b.reserved -= r.Amount
		if r.b.reserved < 1e-12 {
			r.b.reserved = 0 // float dust from many reservations
		}
		r.b.spent += actualUSD
		if r.limited && r.b.spent > r.limit {
			v = r.p.violation(r.r, Output, "the run has spent %s of its %s budget", usd(r.b.spent), usd(r.limit))
		}
	})
	if v != nil {
		return v
	}
	return nil
}

func usd(f float64) string { return fmt.Sprintf("$%.4f", f) }
