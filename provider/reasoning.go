package provider

// The reasoning table: how an effort level and a thinking budget in tokens
// stand for each other when a target takes only one of them. The budgets
// for low, medium and high are those Google documents for Gemini's
// OpenAI-compatible endpoint (1,024, 8,192 and 24,576); minimal is half of
// low. Going from a budget to a level picks the level whose budget is
// nearest on a logarithmic scale. Both directions are judgements, and a
// codec that uses them says so with a CodeSettingMapped warning.
var effortBudgets = [...]struct {
	effort Effort
	budget int64
}{
	{EffortMinimal, 512},
	{EffortLow, 1024},
	{EffortMedium, 8192},
	{EffortHigh, 24576},
}

// BudgetFor returns the thinking budget in tokens that stands for effort e
// by the reasoning table: 0 for EffortNone, -1 (let the model decide) for
// an effort the table does not know.
func BudgetFor(e Effort) int64 {
	if e == EffortNone {
		return 0
	}
	for _, x := range effortBudgets {
		if x.effort == e {
			return x.budget
		}
	}
	return -1
}

// EffortFor returns the effort level that stands for a thinking budget by
// the reasoning table: EffortNone for 0, EffortMedium (the usual default)
// for -1, the level whose budget is nearest otherwise.
func EffortFor(budget int64) Effort {
	switch {
	case budget == 0:
		return EffortNone
	case budget < 0:
		return EffortMedium
	}
	// Boundaries at the geometric means of neighbouring budgets.
	switch {
	case budget <= 724:
		return EffortMinimal
	case budget <= 2896:
		return EffortLow
	case budget <= 14188:
		return EffortMedium
	}
	return EffortHigh
}
