package convo

import (
	"errors"
	"fmt"
	"strconv"
)

// Money is an exact amount of US dollars, counted in nano-dollars
// (billionths of a dollar). Amounts add as integers, so a sum of many
// message costs is exact; it holds up to about 9.2 billion dollars.
//
// Its text form is a decimal string of dollars with up to nine fractional
// digits and no trailing zeros: "0", "0.000123", "12.5".
type Money int64

// Units of Money.
const (
	Nanodollar Money = 1
	Dollar     Money = 1e9
)

// String returns m in dollars as a decimal string with up to nine
// fractional digits and no trailing zeros ("0.0042", "-1.5", "0").
func (m Money) String() string {
	return string(m.Append(nil))
}

// MarshalText writes m's text form, so that a Money in JSON is a decimal
// string ("0.0042"), never a float.
func (m Money) MarshalText() ([]byte, error) { return m.Append(nil), nil }

// UnmarshalText reads the text form ParseMoney reads.
func (m *Money) UnmarshalText(b []byte) error {
	v, err := ParseMoney(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Append appends m's text form to b.
func (m Money) Append(b []byte) []byte {
	u := uint64(m)
	if m < 0 {
		b = append(b, '-')
		u = -u
	}
	b = strconv.AppendUint(b, u/uint64(Dollar), 10)
	frac := u % uint64(Dollar)
	if frac == 0 {
		return b
	}
	var digits [9]byte
	for i := 8; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 9
	for digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}

// ParseMoney reads an amount of dollars written as a decimal number: an
// optional minus sign, digits, and optionally a point and up to nine
// fractional digits ("3", "0.075", "-0.000000001"). Exponents, more
// precision than a nano-dollar and amounts past the range of Money are
// errors, never rounded away.
func ParseMoney(s string) (Money, error) {
	return parseDecimal(s, 9)
}

// parseDecimal reads s as a decimal scaled by 10^scale into an int64,
// refusing anything it cannot hold exactly.
func parseDecimal(s string, scale int) (Money, error) {
	in := s
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg, s = true, s[1:]
	}
	intPart, fracPart := s, ""
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			intPart, fracPart = s[:i], s[i+1:]
			if fracPart == "" {
				return 0, fmt.Errorf("amount %q: no digits after the point", in)
			}
			break
		}
	}
	if intPart == "" {
		return 0, fmt.Errorf("amount %q: want a decimal number such as 0.25", in)
	}
	if len(fracPart) > scale {
		return 0, fmt.Errorf("amount %q: more than %d fractional digits", in, scale)
	}
	var v uint64
	const limit = uint64(1<<63 - 1)
	for i, part := range []string{intPart, fracPart} {
		for j := 0; j < len(part); j++ {
			c := part[j]
			if c < '0' || c > '9' {
				return 0, fmt.Errorf("amount %q: want a decimal number such as 0.25", in)
			}
			if v > (limit-uint64(c-'0'))/10 {
				return 0, fmt.Errorf("amount %q: too large", in)
			}
			v = v*10 + uint64(c-'0')
		}
		if i == 1 {
			for k := len(part); k < scale; k++ {
				if v > limit/10 {
					return 0, fmt.Errorf("amount %q: too large", in)
				}
				v *= 10
			}
		}
	}
	if neg {
		return -Money(v), nil
	}
	return Money(v), nil
}

// Cost is what producing an assistant message cost, priced from its Usage
// and model when it was recorded. A message without a Cost was not priced:
// its cost is unknown, which is not the same as free (a Cost of zero).
type Cost struct {
	// USD is the amount, exact to the nano-dollar.
	USD Money
}

var errNegativeCost = errors.New("negative cost")
