package server

import (
	"errors"
	"net/http"

	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/replay"
)

// replayTurn replays a turn of the conversation on a model and answers
// the comparison: 201 with the new fork, or 200 with the fork of the same
// replay made before.
func (s *Server) replayTurn(w http.ResponseWriter, r *http.Request) {
	if s.opts.Replay == nil {
		s.problem(w, r, notReplaying())
		return
	}
	body, err := s.readBody(w, r, false)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	q, err := parseReplay(body)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	q.Tenant, q.Conversation = tenant(r), r.PathValue("id")
	res, err := s.opts.Replay.Replay(r.Context(), q)
	if err != nil {
		s.problem(w, r, replayError(err))
		return
	}
	w.Header().Set("Location", conversationPath(res.Fork))
	status := http.StatusCreated
	if res.Skipped {
		status = http.StatusOK
	}
	writeJSON(w, status, res)
}

// replayComparison answers the comparison of a replay's fork with its
// origin.
func (s *Server) replayComparison(w http.ResponseWriter, r *http.Request) {
	if s.opts.Replay == nil {
		s.problem(w, r, notReplaying())
		return
	}
	res, err := s.opts.Replay.Compare(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		s.problem(w, r, replayError(err))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// replayRoutes lists the routes a replay's model may take.
func (s *Server) replayRoutes(w http.ResponseWriter, r *http.Request) {
	if s.opts.Replay == nil {
		s.problem(w, r, notReplaying())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": s.opts.Replay.Models()})
}

func notReplaying() *apiError {
	return &apiError{status: http.StatusNotImplemented, kind: "not-implemented",
		detail: "the server was started without upstreams to replay on (convo serve --upstream … --route … or --config FILE)"}
}

// replayError is the problem of a failed replay: a conversation that
// cannot be replayed and a request that cannot be made as asked are the
// client's (422), the store's errors as everywhere.
func replayError(err error) error {
	if errors.Is(err, replay.ErrNotReplayable) {
		return invalid("%v", err)
	}
	return err
}

// parseReplay reads a replay request: {"model", "at", "set": {NAME: VALUE}}.
func parseReplay(body []byte) (replay.Request, error) {
	var q replay.Request
	err := object(body, func(key string, rd *jsonx.Reader) error {
		var err error
		switch key {
		case "model":
			q.Model, err = rd.ReadString()
		case "at":
			q.At, err = rd.ReadString()
		case "set":
			if rd.Peek() != jsonx.Object {
				return errors.New("want an object of settings")
			}
			err = rd.ReadObject(func(name []byte) error {
				v, err := rd.ReadRaw()
				q.Set = append(q.Set, replay.Setting{Name: string(name), Value: v})
				return err
			})
		default:
			return unknownMember(key)
		}
		return err
	})
	if err == nil && q.Model == "" {
		err = badRequest("model: required")
	}
	return q, err
}
