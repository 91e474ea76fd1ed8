package ui

import (
	"net/http"
	"strconv"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// usageBar is one bar of a usage chart, drawn on the server as SVG: its
// label, its figures and its length in chart units.
type usageBar struct {
	Label            string
	Cost             convo.Money
	Tokens, Unpriced int64
	Y, Width         int
}

// usageData is the usage page's: the tenant's last Days days by day and
// by model.
type usageData struct {
	Days   int
	Since  time.Time
	Charts []usageChart
	Total  store.UsageRow
}

// usageChart is one chart of bars, Height units high.
type usageChart struct {
	Name   string
	Bars   []usageBar
	Height int
}

// chartWidth is the length of the longest bar.
const chartWidth = 480

// usagePage shows what the visitor's tenant spent over the last days
// (?days=N, 1…366, default 30): charts by day and by model.
func (u *UI) usagePage(w http.ResponseWriter, r *http.Request) {
	ur, ok := u.st.(store.UsageReporter)
	if !ok {
		u.errorPage(w, r, http.StatusNotFound, "No usage", "This store does not answer usage questions.")
		return
	}
	days := 30
	if n, err := strconv.Atoi(r.URL.Query().Get("days")); err == nil && n >= 1 && n <= 366 {
		days = n
	}
	tenant := visitorOf(r).tenant
	until := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	d := usageData{Days: days, Since: until.AddDate(0, 0, -days)}
	var groups [3][]store.UsageRow
	for i, by := range []store.UsageGroup{store.ByDay, store.ByModel, store.ByNone} {
		rows, err := ur.Usage(r.Context(), store.UsageQuery{Tenant: tenant, By: by, Since: d.Since, Until: until})
		if err != nil {
			u.fail(w, r, err)
			return
		}
		groups[i] = rows
	}
	for i, name := range []string{"By day", "By model"} {
		if len(groups[i]) > 0 {
			d.Charts = append(d.Charts, usageChart{Name: name, Bars: bars(groups[i]), Height: 24*len(groups[i]) + 4})
		}
	}
	if len(groups[2]) == 1 {
		d.Total = groups[2][0]
	}
	u.render(w, r, http.StatusOK, "usage.html", page{Title: "Usage", Data: d})
}

// bars scales rows to bars, the most costly (else the most tokens) the
// full chart width, 24 units apart.
func bars(rows []store.UsageRow) []usageBar {
	var maxCost convo.Money
	var maxTokens int64
	for _, r := range rows {
		maxCost, maxTokens = max(maxCost, r.Cost), max(maxTokens, r.Input+r.Output)
	}
	out := make([]usageBar, len(rows))
	for i, r := range rows {
		b := usageBar{Label: r.Key, Cost: r.Cost, Tokens: r.Input + r.Output, Unpriced: r.Unpriced, Y: i * 24}
		if b.Label == "" {
			b.Label = "(no model)"
		}
		switch {
		case maxCost > 0:
			b.Width = int(int64(r.Cost) * chartWidth / int64(maxCost))
		case maxTokens > 0:
			b.Width = int(b.Tokens * chartWidth / maxTokens)
		}
		out[i] = b
	}
	return out
}
