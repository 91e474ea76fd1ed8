package server_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/convo-go/convo/archive"
	"github.com/convo-go/convo/store"
)

// TestExportArchive: export in the outside formats answers exactly what
// package archive writes, warnings in headers, strict as a 422.
func TestExportArchive(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), nil)
		c := ts.create(t, ts.alice, exampleMessages(t))
		path := "/convo/v1/conversations/" + c.ID + "/export"
		h, sc := ts.load(t, ts.aliceTenant, c.ID)
		for _, tc := range []struct {
			query, contentType string
			f                  archive.Format
			opts               archive.WriteOptions
		}{
			{"format=markdown", "text/markdown; charset=utf-8", archive.Markdown, archive.WriteOptions{}},
			{"format=markdown&reasoning=text&embed_media=true", "text/markdown; charset=utf-8", archive.Markdown, archive.WriteOptions{Reasoning: true, EmbedMedia: true}},
			{"format=finetune", "application/jsonl", archive.FineTune, archive.WriteOptions{}},
			{"format=sharegpt", "application/json", archive.ShareGPT, archive.WriteOptions{}},
		} {
			var want bytes.Buffer
			warns, err := archive.Write(&want, tc.f, []*archive.Conversation{{ID: c.ID, Title: sc.Title, History: h}}, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			r := ts.do(t, "GET", path+"?"+tc.query, ts.alice, nil).want(t, 200)
			if r.header.Get("Content-Type") != tc.contentType || r.header.Get("Convo-Version") != "1" {
				t.Errorf("%s: headers %v", tc.query, r.header)
			}
			if !bytes.Equal(r.body, want.Bytes()) {
				t.Errorf("%s: body differs from archive.Write:\n%s\nwant\n%s", tc.query, r.body, want.Bytes())
			}
			if got := r.header.Values("Convo-Warning"); len(got) != len(warns) {
				t.Errorf("%s: warnings %q, want %v", tc.query, got, warns)
			}
			if len(warns) > 0 {
				p := ts.do(t, "GET", path+"?strict=true&"+tc.query, ts.alice, nil).problem(t, 422, "invalid")
				if len(p.Errors) != len(warns) || !strings.Contains(p.Detail, "strict") {
					t.Errorf("%s: strict problem %+v, want the %d warnings", tc.query, p, len(warns))
				}
			}
		}
		ts.do(t, "GET", path+"?format=markdown&embed_media=maybe", ts.alice, nil).problem(t, 400, "bad-request")
		ts.do(t, "GET", "/convo/v1/conversations/nope/export?format=markdown", ts.alice, nil).problem(t, 404, "not-found")
	})
}
