package wire

import "testing"

func TestCallsAnswer(t *testing.T) {
	var c Calls
	c.Add("c1", "weather", false)
	c.Add("c2", "time", true)
	c.Add("c3", "weather", true)
	for _, tc := range []struct {
		id, name         string
		wantID, wantName string
		ok               bool
	}{
		{"c3", "", "c3", "weather", true},      // by id, whatever the order
		{"c3", "", "", "", false},              // answered already
		{"", "weather", "c1", "weather", true}, // by name, first unanswered
		{"", "weather", "", "", false},         // both weather calls answered
		{"x", "time", "", "", false},           // an id that names no call
		{"", "", "c2", "time", true},           // no id, no name: the first unanswered
		{"", "", "", "", false},                // all answered
	} {
		id, name, ok := c.Answer(tc.id, tc.name)
		if id != tc.wantID || name != tc.wantName || ok != tc.ok {
			t.Errorf("Answer(%q, %q) = %q, %q, %v; want %q, %q, %v", tc.id, tc.name, id, name, ok, tc.wantID, tc.wantName, tc.ok)
		}
	}
}

func TestCallsLookup(t *testing.T) {
	var c Calls
	c.Add("c1", "weather", false)
	c.Add("c2", "time", true)
	if c.Name("c2") != "time" || c.Name("c9") != "" {
		t.Error("Name")
	}
	if c.Synthetic("c1") || !c.Synthetic("c2") || c.Synthetic("c9") {
		t.Error("Synthetic")
	}
	c.Reset()
	if c.Name("c1") != "" || c.Synthetic("c2") {
		t.Error("Reset must forget the calls")
	}
	if _, _, ok := c.Answer("", ""); ok {
		t.Error("Answer after Reset")
	}
}
