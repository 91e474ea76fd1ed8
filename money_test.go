package convo_test

import (
	"math"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"pgregory.net/rapid"
)

func TestMoneyText(t *testing.T) {
	tests := []struct {
		in   string
		want convo.Money
		text string // String of want; "" means in
		err  string
	}{
		{in: "0", want: 0},
		{in: "3", want: 3 * convo.Dollar},
		{in: "3.00", want: 3 * convo.Dollar, text: "3"},
		{in: "0.075", want: 75_000_000},
		{in: "0.000000001", want: 1},
		{in: "-1.5", want: -1_500_000_000},
		{in: "9223372036.854775807", want: math.MaxInt64},
		{in: "9223372036.854775808", err: "too large"},
		{in: "0.0000000001", err: "more than 9 fractional digits"},
		{in: "1e3", err: "want a decimal number"},
		{in: "", err: "want a decimal number"},
		{in: ".5", err: "want a decimal number"},
		{in: "5.", err: "no digits after the point"},
		{in: "+5", err: "want a decimal number"},
		{in: "1,5", err: "want a decimal number"},
		{in: "NaN", err: "want a decimal number"},
	}
	for _, tt := range tests {
		got, err := convo.ParseMoney(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseMoney(%q) = %v, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseMoney(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			continue
		}
		text := tt.text
		if text == "" {
			text = tt.in
		}
		if got.String() != text {
			t.Errorf("Money(%d).String() = %q, want %q", got, got.String(), text)
		}
	}
}

// TestMoneyRoundTrip: every amount's text reads back as the same amount.
func TestMoneyRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := convo.Money(rapid.Int64Range(-math.MaxInt64, math.MaxInt64).Draw(t, "m"))
		back, err := convo.ParseMoney(m.String())
		if err != nil || back != m {
			t.Fatalf("%d → %q → %d, %v", m, m.String(), back, err)
		}
	})
}

func TestCostMember(t *testing.T) {
	tests := []struct {
		doc  string
		want *convo.Cost
		err  string
	}{
		{doc: `{"role":"assistant","cost":{"usd":"0.25"}}`, want: &convo.Cost{USD: 250_000_000}},
		{doc: `{"role":"assistant","cost":{"usd":"0"}}`, want: &convo.Cost{}},
		{doc: `{"role":"assistant","cost":null}`},
		{doc: `{"role":"assistant"}`},
		{doc: `{"role":"assistant","cost":{"usd":"-1"}}`, err: "messages[0].cost.usd: negative cost"},
		{doc: `{"role":"assistant","cost":{"usd":0.25}}`, err: "messages[0].cost.usd"},
		{doc: `{"role":"assistant","cost":{"usd":"1e-3"}}`, err: "messages[0].cost.usd"},
		{doc: `{"role":"assistant","cost":{}}`, err: "messages[0].cost: missing usd"},
		{doc: `{"role":"assistant","cost":{"usd":"1","eur":"1"}}`, err: `messages[0].cost: unknown member "eur"`},
	}
	for _, tt := range tests {
		h, err := convo.Unmarshal([]byte("[" + tt.doc + "]"))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err %v, want %q", tt.doc, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.doc, err)
			continue
		}
		got := h[0].Cost
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("%s: cost %+v, want %+v", tt.doc, got, tt.want)
		}
	}
}

// TestCostOlderReader: a reader older than cost keeps the member as an
// unknown one and writes it last; this reader takes it from there too.
func TestCostOlderReader(t *testing.T) {
	older := `[{"role":"assistant","finish":"stop","parts":[{"type":"text","text":"hi"}],"cost":{"usd":"0.001"}}]`
	h, err := convo.Unmarshal([]byte(older))
	if err != nil {
		t.Fatal(err)
	}
	if h[0].Cost == nil || h[0].Cost.USD != 1_000_000 || len(h[0].Extra) != 0 {
		t.Fatalf("cost %+v, extra %v", h[0].Cost, h[0].Extra)
	}
	b, err := convo.AppendMessage(nil, h[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"assistant","cost":{"usd":"0.001"},"finish":"stop","parts":[{"type":"text","text":"hi"}]}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	if err := (convo.History{{Role: convo.RoleAssistant, Finish: convo.FinishStop, Cost: &convo.Cost{USD: -1}}}).Validate(); err == nil || !strings.Contains(err.Error(), "messages[0].cost.usd") {
		t.Errorf("Validate of a negative cost: %v", err)
	}
}
