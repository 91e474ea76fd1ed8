package archive

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/convo-go/convo/provider"
)

// Open reads format f from a file, a directory or a .zip file, as the tools
// hand their data over:
//
//   - ChatGPT: conversations.json, or the shards conversations-000.json,
//     conversations-001.json, … of newer exports, in a directory or in the
//     export's zip file;
//   - Claude: conversations.json, in a directory or in the export's zip;
//   - Claude Code: a session file, or every *.jsonl of a project directory
//     (one conversation each);
//   - llm: the logs.db file;
//   - ShareGPT, fine-tuning JSONL: a file.
//
// Places in warnings and errors start with the file's name when there is
// more than one.
func Open(name string, f Format, opts Options) (*Reader, error) {
	if f == LLM {
		return OpenLLM(name)
	}
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	var files []source
	switch {
	case st.IsDir():
		entries, err := os.ReadDir(name)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range entries {
			if !e.IsDir() {
				names = append(names, e.Name())
			}
		}
		for _, n := range pick(names, f) {
			full := filepath.Join(name, n)
			files = append(files, source{name: n, open: func() (io.ReadCloser, error) { return os.Open(full) }})
		}
	case strings.EqualFold(filepath.Ext(name), ".zip"):
		z, err := zip.OpenReader(name)
		if err != nil {
			return nil, err
		}
		byBase := map[string]*zip.File{}
		var names []string
		for _, zf := range z.File {
			b := path.Base(zf.Name)
			if zf.FileInfo().IsDir() || byBase[b] != nil {
				continue
			}
			byBase[b] = zf
			names = append(names, b)
		}
		for _, n := range pick(names, f) {
			zf := byBase[n]
			files = append(files, source{name: zf.Name, open: zf.Open})
		}
		r := chain(files, f, opts)
		r.close = z.Close
		if len(files) == 0 {
			z.Close()
			return nil, fmt.Errorf("%s: no %s conversations in the zip file", name, f)
		}
		return r, nil
	default:
		files = []source{{name: filepath.Base(name), open: func() (io.ReadCloser, error) { return os.Open(name) }}}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no %s conversations in the directory", name, f)
	}
	return chain(files, f, opts), nil
}

type source struct {
	name string
	open func() (io.ReadCloser, error)
}

// pick chooses the files of a directory or zip that hold format f.
func pick(names []string, f Format) []string {
	slices.Sort(names)
	var out []string
	switch f {
	case ChatGPT:
		if slices.Contains(names, "conversations.json") {
			return []string{"conversations.json"}
		}
		for _, n := range names {
			if m, _ := path.Match("conversations-[0-9]*.json", n); m {
				out = append(out, n)
			}
		}
	case Claude:
		if slices.Contains(names, "conversations.json") {
			out = []string{"conversations.json"}
		}
	case ClaudeCode, FineTune:
		for _, n := range names {
			if strings.HasSuffix(n, ".jsonl") {
				out = append(out, n)
			}
		}
	case ShareGPT:
		for _, n := range names {
			if strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".jsonl") {
				out = append(out, n)
			}
		}
	}
	return out
}

// chain reads the files one after another as one reader.
func chain(files []source, f Format, opts Options) *Reader {
	var cur *Reader
	var curFile io.ReadCloser
	var done int64 // bytes of the files finished
	i := -1
	out := &Reader{}
	prefix := func(ws []provider.Warning) []provider.Warning {
		if len(files) < 2 {
			return ws
		}
		for k := range ws {
			ws[k].Path = files[i].name + ": " + ws[k].Path
		}
		return ws
	}
	out.count = func() int64 {
		if cur == nil {
			return done
		}
		return done + cur.BytesRead()
	}
	out.close = func() error {
		if curFile != nil {
			return curFile.Close()
		}
		return nil
	}
	out.next = func() (*Conversation, error) {
		for {
			if cur != nil {
				c, err := cur.Next()
				if err == nil {
					c.Warnings = prefix(c.Warnings)
					return c, nil
				}
				out.warnings = append(out.warnings, prefix(cur.Warnings())...)
				if err != io.EOF {
					if len(files) > 1 {
						err = fmt.Errorf("%s: %w", files[i].name, err)
					}
					return nil, err
				}
				done += cur.BytesRead()
				curFile.Close()
				cur, curFile = nil, nil
			}
			i++
			if i >= len(files) {
				return nil, io.EOF
			}
			rc, err := files[i].open()
			if err != nil {
				return nil, err
			}
			r, err := NewReader(rc, f, opts)
			if err != nil {
				rc.Close()
				return nil, err
			}
			cur, curFile = r, rc
		}
	}
	return out
}
