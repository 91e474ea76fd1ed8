package catalog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Rate is a price in whole micro-dollars (millionths of a US dollar) per
// million tokens, which is also pico-dollars per token: n tokens at rate r
// cost n×r pico-dollars, an exact integer. Prices are written in the file
// as decimal strings of dollars per million tokens ("0.075") and never pass
// through a float, so a sum of costs is exact to the pico-dollar.
//
// NoRate (negative) marks a price the catalogue does not know or that the
// provider does not charge apart; zero is a real price of nothing.
type Rate int64

// NoRate is the Rate of a price that is not known.
const NoRate Rate = -1

// rateDecimals is how many decimal places of a dollar a Rate holds.
const rateDecimals = 6

// maxRate bounds a price at a million dollars per million tokens, far above
// any published price, so that a cost of a few billion tokens cannot
// overflow an int64 of pico-dollars by much less than that.
const maxRate = Rate(1_000_000 * 1_000_000)

// Known reports whether the rate is a price (zero included).
func (r Rate) Known() bool { return r >= 0 }

// Micro returns the rate in micro-dollars per million tokens, and whether
// it is known.
func (r Rate) Micro() (int64, bool) { return int64(r), r >= 0 }

// String writes the rate as dollars per million tokens, the form the file
// uses ("0.075"), or "unknown".
func (r Rate) String() string {
	if r < 0 {
		return "unknown"
	}
	whole, frac := int64(r)/1_000_000, int64(r)%1_000_000
	if frac == 0 {
		return strconv.FormatInt(whole, 10)
	}
	f := strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
	return strconv.FormatInt(whole, 10) + "." + f
}

// ParseRate reads a price in dollars per million tokens written as a
// plain decimal ("3", "0.30", "0.01875"): digits, at most one point, at
// most six decimal places, no sign, exponent or spaces.
func ParseRate(s string) (Rate, error) {
	if s == "" {
		return NoRate, errors.New("empty price")
	}
	if s[0] == '-' {
		return NoRate, fmt.Errorf("negative price %q", s)
	}
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || (dot && frac == "") || !digits(whole) || !digits(frac) {
		return NoRate, fmt.Errorf("%q is not a decimal number of dollars (want digits like \"0.30\")", s)
	}
	if len(frac) > rateDecimals {
		return NoRate, fmt.Errorf("%q has more than %d decimal places", s, rateDecimals)
	}
	if len(whole) > 7 {
		return NoRate, fmt.Errorf("%q is more than $%d per million tokens", s, int64(maxRate)/1_000_000)
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", rateDecimals-len(frac)), 10, 64)
	}
	r := Rate(w*1_000_000 + f)
	if r > maxRate {
		return NoRate, fmt.Errorf("%q is more than $%d per million tokens", s, int64(maxRate)/1_000_000)
	}
	return r, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
