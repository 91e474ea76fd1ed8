package server

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/convo-go/convo/archive"
	"github.com/convo-go/convo/provider"
)

// archiveFormat reports whether name is one of the outside formats export
// writes (Markdown, fine-tuning JSONL, ShareGPT).
func archiveFormat(name string) (archive.Format, bool) {
	for _, f := range archive.Writable() {
		if string(f) == name {
			return f, true
		}
	}
	return "", false
}

var archiveContentType = map[archive.Format]string{
	archive.Markdown: "text/markdown; charset=utf-8",
	archive.FineTune: "application/jsonl",
	archive.ShareGPT: "application/json",
}

// exportArchive answers an export in an outside format: the document
// itself, its warnings in Convo-Warning headers (one each), strict making
// any warning a 422. reasoning=text puts reasoning in Markdown,
// embed_media=true embeds inline images in it.
func (s *Server) exportArchive(w http.ResponseWriter, r *http.Request, f archive.Format) {
	opts, err := exportOptions(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	embed, err := queryBool(r, "embed_media")
	if err != nil {
		s.problem(w, r, err)
		return
	}
	h, c, err := s.st.Load(r.Context(), tenant(r), r.PathValue("id"), 0)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var buf bytes.Buffer
	warns, err := archive.Write(&buf, f, []*archive.Conversation{{ID: c.ID, Title: c.Title, History: h}},
		archive.WriteOptions{Reasoning: opts.Reasoning == provider.ReasoningText, EmbedMedia: embed})
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if opts.Strict && len(warns) > 0 {
		e := invalid("writing %s: strict: the conversion had warnings", f)
		for _, wn := range warns {
			e.errs = append(e.errs, fieldError{Path: wn.Path, Detail: wn.Msg})
		}
		s.problem(w, r, e)
		return
	}
	w.Header().Set("Convo-Version", strconv.FormatInt(c.Version, 10))
	for _, wn := range warns {
		w.Header().Add("Convo-Warning", wn.String())
	}
	writeRaw(w, http.StatusOK, archiveContentType[f], buf.Bytes())
}
