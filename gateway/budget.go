package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// Budget caps what a tenant, or the holder of one gateway token, spends
// in a UTC day or month. A request made while the period's spend is at or
// past the amount is refused before it reaches the upstream: 429 in the
// client's protocol, with Retry-After the seconds to the period's end.
// The spend is what the recorded replies cost (their convo.Cost), kept in
// the store (store.SpendKeeper), so gateways on one database share it.
// docs/gateway.md, "Budgets", gives the format and the overspend bound.
type Budget struct {
	// Tenant names the tenant the budget caps ("" is the tenant of
	// requests without a gateway token). Exactly one of Tenant and
	// TokenSHA256 is set.
	Tenant *string `json:"tenant,omitempty"`
	// TokenSHA256 is the SHA-256 of one gateway token, 64 hexadecimal
	// digits (`printf %s TOKEN | sha256sum`): the budget caps the requests
	// made with that token, and the configuration holds no secret.
	TokenSHA256 string `json:"token_sha256,omitempty"`
	// USD is the amount. In JSON a decimal string ("25.50") or number
	// (25.5), read exactly.
	USD convo.Money `json:"usd"`
	// Period is "day" or "month" (UTC).
	Period string `json:"period"`

	err error // what JSON could not read, reported by Validate with the budget's place
}

// UnmarshalJSON reads a budget, its amount as a string or a number.
func (b *Budget) UnmarshalJSON(data []byte) error {
	var raw struct {
		Tenant      *string         `json:"tenant"`
		TokenSHA256 string          `json:"token_sha256"`
		USD         json.RawMessage `json:"usd"`
		Period      string          `json:"period"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	*b = Budget{}
	if err := dec.Decode(&raw); err != nil {
		b.err = err
		return nil
	}
	b.Tenant, b.TokenSHA256, b.Period = raw.Tenant, raw.TokenSHA256, raw.Period
	text := string(raw.USD)
	if s, err := strconv.Unquote(text); err == nil {
		text = s
	}
	switch {
	case len(raw.USD) == 0 || text == "null":
		b.err = fmt.Errorf("no usd: want an amount such as \"25.50\"")
	default:
		if b.USD, b.err = convo.ParseMoney(text); b.err != nil {
			b.err = fmt.Errorf("usd: %w", b.err)
		}
	}
	return nil
}

// check reports what makes the budget unusable.
func (b Budget) check() error {
	switch {
	case b.err != nil:
		return b.err
	case (b.Tenant == nil) == (b.TokenSHA256 == ""):
		return fmt.Errorf("want one of tenant and token_sha256")
	case b.TokenSHA256 != "" && !hexSHA256(b.TokenSHA256):
		return fmt.Errorf("token_sha256: want the 64 hexadecimal digits of a SHA-256")
	case b.USD < 0:
		return fmt.Errorf("negative usd %s", b.USD)
	case b.Period == "":
		return fmt.Errorf(`no period: want "day" or "month"`)
	case b.Period != "day" && b.Period != "month":
		return fmt.Errorf(`unknown period %q: want "day" or "month"`, b.Period)
	}
	return nil
}

func hexSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}

// subject names whom a budget caps, for duplicates and messages.
func (b Budget) subject() string {
	if b.Tenant != nil {
		return fmt.Sprintf("tenant %q", *b.Tenant)
	}
	return "gateway token sha256:" + b.TokenSHA256[:12] + "…"
}

// checkBudgets validates the budgets of a configuration.
func checkBudgets(bs []Budget) error {
	seen := map[string]bool{}
	for i, b := range bs {
		if err := b.check(); err != nil {
			return fmt.Errorf("gateway: budgets[%d]: %w", i, err)
		}
		k := b.subject() + " " + b.Period
		if seen[k] {
			return fmt.Errorf("gateway: budgets[%d]: a second %s budget for %s", i, b.Period, b.subject())
		}
		seen[k] = true
	}
	return nil
}

// budget is a Budget made ready for the requests.
type budget struct {
	limit  convo.Money
	month  bool
	tenant string // whose counter
	key    string // the counter: "tenant", or "token:" and 16 hex digits of the token's hash
	what   string // the subject, for messages
	kind   string // the metric's label: tenant or token

	mu        sync.Mutex
	exhausted time.Time // the end of the period the budget was found spent in
}

// period returns the budget's period holding now: [start, end).
func (b *budget) period(now time.Time) (start, end time.Time) {
	y, m, d := now.UTC().Date()
	if b.month {
		start = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	}
	start = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}

// budgets are the gateway's budgets; a nil *budgets has none.
type budgets struct {
	st       store.SpendKeeper
	byTenant map[string][]*budget
	byToken  map[[sha256.Size]byte][]*budget
	log      *slog.Logger
	now      func() time.Time

	refused  *prometheus.CounterVec // nil without metrics
	failures prometheus.Counter     // nil without metrics
	errLog   rateLog
}

// budgetCheckTimeout bounds the store's answer about a request's spend:
// past it, the request goes (see budgets.over).
const budgetCheckTimeout = time.Second

// newBudgets readies the configured budgets: a token budget's tenant is
// its token's.
func newBudgets(opts Options, tokens map[[sha256.Size]byte]string, log *slog.Logger) (*budgets, error) {
	if len(opts.Config.Budgets) == 0 {
		return nil, nil
	}
	sk, ok := opts.Store.(store.SpendKeeper)
	if !ok {
		return nil, fmt.Errorf("gateway: budgets need a store that keeps spend (SQLite or PostgreSQL)")
	}
	bs := &budgets{st: sk, byTenant: map[string][]*budget{}, byToken: map[[sha256.Size]byte][]*budget{}, log: log, now: time.Now}
	for i, c := range opts.Config.Budgets {
		b := &budget{limit: c.USD, month: c.Period == "month", what: c.subject()}
		if c.Tenant != nil {
			b.tenant, b.key, b.kind = *c.Tenant, "tenant", "tenant"
			bs.byTenant[b.tenant] = append(bs.byTenant[b.tenant], b)
			continue
		}
		h, tenant, err := tokenOf(i, c, tokens)
		if err != nil {
			return nil, err
		}
		b.tenant, b.key, b.kind = tenant, "token:"+c.TokenSHA256[:16], "token"
		bs.byToken[h] = append(bs.byToken[h], b)
	}
	if opts.Metrics != nil {
		bs.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "convo_budget_refused_total",
			Help: "Requests refused over budget (429 before the upstream), by tenant, budget (tenant or token) and period (day or month).",
		}, []string{"tenant", "budget", "period"})
		bs.failures = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "convo_budget_check_errors_total",
			Help: "Budget checks the store did not answer (in time): the request went on unchecked.",
		})
		for _, c := range []prometheus.Collector{bs.refused, bs.failures} {
			if err := opts.Metrics.Register(c); err != nil {
				return nil, fmt.Errorf("gateway: registering metrics: %w", err)
			}
		}
	}
	return bs, nil
}

// applying returns the budgets a request of tenant made with r's token
// is under, and the counters its cost is charged to.
func (bs *budgets) applying(r *http.Request, tenant string) ([]*budget, []string) {
	if bs == nil {
		return nil, nil
	}
	out := bs.byTenant[tenant]
	if len(bs.byToken) > 0 {
		if tok := gatewayToken(r); tok != "" {
			if tb := bs.byToken[sha256.Sum256([]byte(tok))]; len(tb) > 0 && tb[0].tenant == tenant {
				out = append(out[:len(out):len(out)], tb...)
			}
		}
	}
	var keys []string
	for _, b := range out {
		if len(keys) == 0 || keys[len(keys)-1] != b.key {
			keys = append(keys, b.key)
		}
	}
	return out, keys
}

// overBudget is why a request is refused: the budget spent and when its
// period ends.
type overBudget struct {
	b     *budget
	spent convo.Money
	end   time.Time
}

// over returns the budget of bs a request is over, or nil. A budget found
// spent is refused without asking the store again until its period ends
// (spend only grows). A store that does not answer lets the request go,
// counted and logged: the gateway keeps serving while its store is down
// (the spool keeps what it records), and a budget it cannot read cannot
// be enforced.
func (bs *budgets) over(ctx context.Context, applying []*budget) *overBudget {
	var worst *overBudget
	now := bs.now()
	for _, b := range applying {
		start, end := b.period(now)
		b.mu.Lock()
		spentUntil := b.exhausted
		b.mu.Unlock()
		var spent convo.Money
		if now.Before(spentUntil) {
			spent = -1 // known spent
		} else {
			cctx, cancel := context.WithTimeout(ctx, budgetCheckTimeout)
			var err error
			spent, err = bs.st.Spent(cctx, b.tenant, b.key, start, end)
			cancel()
			if err != nil {
				if bs.failures != nil {
					bs.failures.Inc()
				}
				if n := bs.errLog.note(1); n > 0 {
					bs.log.Warn("gateway: budget not checked: the store did not answer", "err", err, "requests", n)
				}
				continue
			}
			if spent < b.limit {
				continue
			}
			b.mu.Lock()
			if b.exhausted.Before(end) {
				b.exhausted = end
				bs.log.Info("gateway: budget spent", "budget", b.what, "usd", b.limit.String(), "spent", spent.String(), "until", end.Format(time.RFC3339))
			}
			b.mu.Unlock()
		}
		if worst == nil || end.After(worst.end) {
			worst = &overBudget{b: b, spent: spent, end: end}
		}
	}
	return worst
}

// refuse answers a request over budget: 429 in the client's protocol,
// Retry-After the whole seconds to the period's end.
func (bs *budgets) refuse(w http.ResponseWriter, p *protocol, o *overBudget) {
	b := o.b
	label, period := "day", "daily"
	if b.month {
		label, period = "month", "monthly"
	}
	if bs.refused != nil {
		bs.refused.WithLabelValues(b.tenant, b.kind, label).Inc()
	}
	secs := int64(math.Ceil(o.end.Sub(bs.now()).Seconds()))
	w.Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
	writeError(w, p, http.StatusTooManyRequests, fmt.Sprintf("over budget: %s has spent its %s budget of $%s; it renews at %s",
		b.what, period, b.limit, o.end.Format(time.RFC3339)))
}

// CheckTokens reports a token budget of c that names none of tokens (a
// gateway token's SHA-256), as New would, before anything is opened.
func (c Config) CheckTokens(tokens map[string]string) error {
	hashes := map[[sha256.Size]byte]string{}
	for tok, tenant := range tokens {
		hashes[sha256.Sum256([]byte(tok))] = tenant
	}
	for i, b := range c.Budgets {
		if b.TokenSHA256 == "" {
			continue
		}
		if _, _, err := tokenOf(i, b, hashes); err != nil {
			return err
		}
	}
	return nil
}

// tokenOf returns the hash a token budget (budgets[i]) names and the
// tenant of the gateway token it is the hash of.
func tokenOf(i int, b Budget, tokens map[[sha256.Size]byte]string) (h [sha256.Size]byte, tenant string, err error) {
	if _, err := hex.Decode(h[:], []byte(b.TokenSHA256)); err != nil {
		return h, "", fmt.Errorf("gateway: budgets[%d]: token_sha256: %w", i, err)
	}
	tenant, ok := tokens[h]
	if !ok {
		return h, "", fmt.Errorf("gateway: budgets[%d]: token_sha256 %s… is the hash of no gateway token", i, b.TokenSHA256[:12])
	}
	return h, tenant, nil
}
