package provider

import (
	"errors"
	"testing"
)

func TestFinish(t *testing.T) {
	ws := []Warning{
		WarnCode(CodeSettingDropped, "seed", "left out"),
		WarnCode(CodeReasoningDropped, "messages[1].parts[0]", "dropped"),
		Warnf("messages[2]", "unclassified"),
	}
	got, err := Options{}.Finish(ws)
	if err != nil || len(got) != 3 {
		t.Fatalf("default: %v %v", got, err)
	}
	got, _ = Options{Accept: []Code{CodeSettingDropped}}.Finish(ws)
	if len(got) != 2 || got[0].Code != CodeReasoningDropped {
		t.Errorf("accept: %v", got)
	}
	got, _ = Options{Reasoning: ReasoningDrop}.Finish(ws)
	if len(got) != 2 || got[0].Code != CodeSettingDropped {
		t.Errorf("explicit drop: %v", got)
	}
	var seen []Warning
	got, err = Options{OnWarning: func(w Warning) { seen = append(seen, w) }}.Finish(ws)
	if got != nil || err != nil || len(seen) != 3 {
		t.Errorf("OnWarning: %v %v %v", got, err, seen)
	}
	_, err = Options{Strict: true, Accept: []Code{CodeSettingDropped, CodeReasoningDropped}}.Finish(ws)
	var se *StrictError
	if !errors.As(err, &se) || len(se.Warnings) != 1 {
		t.Errorf("strict: %v", err)
	}
	if _, err := (Options{Strict: true, Accept: []Code{CodeSettingDropped}}).Finish(ws[:1]); err != nil {
		t.Errorf("strict with everything accepted: %v", err)
	}
}

func TestReasoningTable(t *testing.T) {
	for _, e := range []Effort{EffortNone, EffortMinimal, EffortLow, EffortMedium, EffortHigh} {
		if got := EffortFor(BudgetFor(e)); got != e {
			t.Errorf("EffortFor(BudgetFor(%q)) = %q", e, got)
		}
	}
	if BudgetFor("extreme") != -1 || EffortFor(-1) != EffortMedium || EffortFor(100000) != EffortHigh {
		t.Error("edges of the table")
	}
}
