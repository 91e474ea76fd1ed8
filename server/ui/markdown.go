package ui

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// md renders message text. Goldmark without html.WithUnsafe never passes
// raw HTML through (it writes a comment instead); safeLinks keeps only
// links whose scheme is harmless and turns images into links, since a
// transcript should not fetch anything a model wrote. Table alignment is an
// attribute, not a style: the Content-Security-Policy allows no inline style.
var md = goldmark.New(
	goldmark.WithExtensions(
		extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
		extension.Strikethrough,
		extension.Linkify,
		extension.TaskList,
	),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(safeLinks{}, 100))),
	goldmark.WithRendererOptions(html.WithHardWraps(),
		renderer.WithNodeRenderers(util.Prioritized(escapeHTML{}, 100))),
)

// escapeHTML renders the raw HTML a message holds as the text it is, so a
// reader sees what the model wrote instead of nothing.
type escapeHTML struct{}

func (escapeHTML) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindRawHTML, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := range segs.Len() {
				seg := segs.At(i)
				_, _ = w.WriteString(template.HTMLEscapeString(string(seg.Value(source))))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	r.Register(ast.KindHTMLBlock, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		b := n.(*ast.HTMLBlock)
		if entering {
			_, _ = w.WriteString(`<pre class="plain">`)
			for i := range b.Lines().Len() {
				line := b.Lines().At(i)
				_, _ = w.WriteString(template.HTMLEscapeString(string(line.Value(source))))
			}
			return ast.WalkContinue, nil
		}
		if b.HasClosure() {
			_, _ = w.WriteString(template.HTMLEscapeString(string(b.ClosureLine.Value(source))))
		}
		_, _ = w.WriteString("</pre>\n")
		return ast.WalkContinue, nil
	})
}

// markdown renders s as sanitised HTML.
func markdown(s string) template.HTML {
	var b bytes.Buffer
	if err := md.Convert([]byte(s), &b); err != nil {
		// Goldmark fails only when writing fails, which a buffer never does;
		// escape the text rather than show nothing all the same.
		return template.HTML("<p>" + template.HTMLEscapeString(s) + "</p>")
	}
	return template.HTML(b.String())
}

// safeURL reports whether a link target may be followed: http, https and
// mailto, or a reference without a scheme (a path or a fragment).
func safeURL(dest string) bool {
	u, err := url.Parse(strings.TrimSpace(dest))
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "mailto":
		return true
	case "":
		// "javascript&colon;" and the like parse without a scheme but
		// are not paths either; a path never holds a colon before its
		// first slash.
		first, _, _ := strings.Cut(dest, "/")
		return !strings.Contains(first, ":")
	}
	return false
}

// safeLinks is the AST transformer that drops unsafe links and images.
type safeLinks struct{}

func (safeLinks) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	var links []ast.Node
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			switch n.(type) {
			case *ast.Link, *ast.Image, *ast.AutoLink:
				links = append(links, n)
			}
		}
		return ast.WalkContinue, nil
	})
	rel := []byte("nofollow noopener noreferrer")
	for _, n := range links {
		parent := n.Parent()
		if parent == nil {
			continue
		}
		switch l := n.(type) {
		case *ast.Link:
			if safeURL(string(l.Destination)) {
				l.SetAttributeString("rel", rel)
				continue
			}
			unwrap(parent, l)
		case *ast.Image:
			// An image becomes a link to it, its alt text the label.
			if !safeURL(string(l.Destination)) {
				unwrap(parent, l)
				continue
			}
			link := ast.NewLink()
			link.Destination, link.Title = l.Destination, l.Title
			link.SetAttributeString("rel", rel)
			for c := l.FirstChild(); c != nil; {
				next := c.NextSibling()
				link.AppendChild(link, c)
				c = next
			}
			if !link.HasChildren() {
				link.AppendChild(link, ast.NewString([]byte("image")))
			}
			parent.ReplaceChild(parent, l, link)
		case *ast.AutoLink:
			u := string(l.URL(reader.Source()))
			if l.AutoLinkType == ast.AutoLinkEmail || safeURL(u) {
				l.SetAttributeString("rel", rel)
				continue
			}
			parent.ReplaceChild(parent, l, ast.NewString([]byte(u)))
		}
	}
}

// unwrap replaces n by its children.
func unwrap(parent, n ast.Node) {
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}
