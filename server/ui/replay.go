package ui

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/replay"
	"github.com/convo-go/convo/store"
)

// replayForm is what the "Replay from here" page shows.
type replayForm struct {
	C       store.Conversation
	At      string // the message replayed from
	Message msgView
	Index   int
	Routes  []replay.Route
	// Models are the models a route names exactly, and those the
	// conversation used that a route takes: the picker's suggestions.
	Models []string
	// Recorded is the recorded request's settings, as JSON ("" when the
	// record keeps none); Warnings what is missing from the record.
	Recorded string
	Warnings []string
	Err      string
}

// GET /ui/c/{id}/replay?at=MESSAGE_ID
func (u *UI) replayPage(w http.ResponseWriter, r *http.Request) {
	if u.opts.Replay == nil {
		u.errorPage(w, r, http.StatusNotFound, "Not found", "This server replays nothing: start it with --upstream and --route, or --config.")
		return
	}
	d, err := u.replayForm(r)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	u.render(w, r, http.StatusOK, "replay.html", page{Title: "Replay from here", Data: d})
}

// replayForm gathers the form's data: the message, the routes, the
// recorded settings.
func (u *UI) replayForm(r *http.Request) (replayForm, error) {
	v := visitorOf(r)
	h, c, err := u.st.Load(r.Context(), v.tenant, r.PathValue("id"), 0)
	if err != nil {
		return replayForm{}, err
	}
	at := r.URL.Query().Get("at")
	if at == "" && len(h) > 0 {
		at = h[len(h)-1].ID
	}
	i := slices.IndexFunc(h, func(m convo.Message) bool { return m.ID == at })
	if i < 0 {
		return replayForm{}, store.ErrNotFound
	}
	d := replayForm{C: c, At: at, Index: i, Message: view(h[i:i+1], i, h[i+1:min(i+9, len(h))])[0], Routes: u.opts.Replay.Models()}
	seen := map[string]bool{}
	for _, rt := range d.Routes {
		if !strings.ContainsAny(rt.Model, "*?[") && !seen[rt.Model] {
			seen[rt.Model] = true
			d.Models = append(d.Models, rt.Model)
		}
	}
	for _, m := range h {
		if m.Origin != nil && m.Origin.Model != "" && !seen[m.Origin.Model] && routed(d.Routes, m.Origin.Model) {
			seen[m.Origin.Model] = true
			d.Models = append(d.Models, m.Origin.Model)
		}
	}
	req, warns, err := replay.Recorded(c, h)
	if err != nil {
		d.Err = err.Error()
	} else if b, _ := json.MarshalIndent(req, "", "  "); string(b) != "{}" && len(warns) == 0 {
		d.Recorded = string(b)
	}
	for _, w := range warns {
		d.Warnings = append(d.Warnings, w.String())
	}
	return d, nil
}

// routed reports whether a route takes model.
func routed(routes []replay.Route, model string) bool {
	for _, rt := range routes {
		if ok, _ := path.Match(rt.Model, model); ok {
			return true
		}
	}
	return false
}

// POST /ui/c/{id}/replay at=&model=&temperature=&max_tokens=&settings=
func (u *UI) replayPost(w http.ResponseWriter, r *http.Request) {
	if u.opts.Replay == nil {
		u.errorPage(w, r, http.StatusNotFound, "Not found", "This server replays nothing.")
		return
	}
	v := visitorOf(r)
	f := r.PostForm
	q := replay.Request{Tenant: v.tenant, Conversation: r.PathValue("id"), At: f.Get("at"), Model: strings.TrimSpace(f.Get("model"))}
	for _, name := range []string{"temperature", "max_tokens"} {
		if s := strings.TrimSpace(f.Get(name)); s != "" {
			q.Set = append(q.Set, replay.Setting{Name: name, Value: json.RawMessage(s)})
		}
	}
	for i, line := range strings.Split(f.Get("settings"), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		s, err := replay.ParseSetting(line)
		if err != nil {
			u.errorPage(w, r, http.StatusBadRequest, "Bad request", "settings, line "+strconv.Itoa(i+1)+": "+err.Error())
			return
		}
		q.Set = append(q.Set, s)
	}
	if q.Model == "" {
		u.errorPage(w, r, http.StatusBadRequest, "Bad request", "Choose a model to replay on.")
		return
	}
	res, err := u.opts.Replay.Replay(r.Context(), q)
	switch {
	case errors.Is(err, replay.ErrNotReplayable):
		u.errorPage(w, r, http.StatusUnprocessableEntity, "Cannot be replayed", err.Error())
		return
	case err != nil:
		u.fail(w, r, err)
		return
	}
	http.Redirect(w, r, Prefix+"c/"+url.PathEscape(res.Fork)+"/compare", http.StatusSeeOther)
}

// compareData is the side-by-side page of a replay and its original.
type compareData struct {
	Res      *replay.Result
	Origin   store.Conversation
	Fork     store.Conversation
	Context  int // messages both hold before the answers
	Rows     []compareRow
	Original []span // the original text, deletions marked
	Replay   []span // the replay's, insertions marked
	Info     replay.Info
}

// compareRow lines up the answers' messages, one of each, either
// possibly absent.
type compareRow struct {
	Original, Replay *msgView
}

// span is a run of a text diff: changed (deleted on the original's side,
// inserted on the replay's) or not.
type span struct {
	Text    string
	Changed bool
}

// GET /ui/c/{id}/compare: id is a replay's fork.
func (u *UI) compare(w http.ResponseWriter, r *http.Request) {
	if u.opts.Replay == nil {
		u.errorPage(w, r, http.StatusNotFound, "Not found", "This server replays nothing.")
		return
	}
	v := visitorOf(r)
	res, err := u.opts.Replay.Compare(r.Context(), v.tenant, r.PathValue("id"))
	if err != nil {
		u.fail(w, r, err)
		return
	}
	d := compareData{Res: res, Context: res.At}
	if d.Fork, err = u.st.Get(r.Context(), v.tenant, res.Fork); err != nil {
		u.fail(w, r, err)
		return
	}
	d.Info, _ = replay.ForkInfo(d.Fork)
	d.Origin, _ = u.st.Get(r.Context(), v.tenant, res.Conversation) // deleted: the page says so
	left, right := view(res.Original.Messages, res.At, nil), view(res.Replay.Messages, res.At, nil)
	for i := range max(len(left), len(right)) {
		var row compareRow
		if i < len(left) {
			row.Original = &left[i]
		}
		if i < len(right) {
			row.Replay = &right[i]
		}
		d.Rows = append(d.Rows, row)
	}
	for _, s := range replay.Diff(res.Original.Text, res.Replay.Text) {
		if s.Op != replay.Insert {
			d.Original = append(d.Original, span{s.Text, s.Op == replay.Delete})
		}
		if s.Op != replay.Delete {
			d.Replay = append(d.Replay, span{s.Text, s.Op == replay.Insert})
		}
	}
	u.render(w, r, http.StatusOK, "compare.html", page{Title: "Replay on " + d.Info.Model, Data: d})
}

// replayLink is what a message's "Replay from here" link needs.
type replayLink struct {
	Prefix, Conv, Msg string
}

func init() {
	funcs["ms"] = func(ms *int64) string {
		if ms == nil {
			return ""
		}
		return strconv.FormatInt(*ms, 10) + " ms"
	}
	funcs["usd"] = func(usd *convo.Money) string {
		if usd == nil {
			return "—"
		}
		return "$" + usd.String()
	}
	funcs["replayFrom"] = func(prefix, conv string, m msgView) *replayLink {
		if m.Role == "system" || m.ID == "" {
			return nil // nothing before it to send, or nothing to name it by
		}
		return &replayLink{Prefix: prefix, Conv: conv, Msg: m.ID}
	}
}
