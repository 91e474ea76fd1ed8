package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/archive"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/backends"
)

func init() {
	commands["store"] = command{
		usage:   "import|export|list|search|show|usage|rm|prune [--db FILE|postgres://…] [--tenant T] …",
		summary: "keep conversations in a database (a SQLite file or PostgreSQL)",
		run:     runStore,
	}
}

// A storeCommand is a subcommand of convo store.
type storeCommand struct {
	usage string
	run   func(e *env, args []string) error
}

// storeCommands is filled in by init: the subcommands' help reads it.
var storeCommands map[string]storeCommand

func init() {
	storeCommands = map[string]storeCommand{
		"import": {"import [--from F] [--id ID] [--title T] [--meta JSON] [FILE]", storeImport},
		"export": {"export [--lines] ID", storeExport},
		"list":   {"list [--title TEXT] [--meta JSON] [--limit N] [--json]", storeList},
		"search": {"search [--limit N] [--json] WORD…", storeSearch},
		"show":   {"show [--json] ID", storeShow},
		"rm":     {"rm ID…", storeRemove},
		"append": {"append [--version N] [--from F] ID [FILE]", storeAppend},
		"prune":  {"prune [--content DURATION] [--metadata DURATION] [--now TIME]", storePrune},
		"usage":  {"usage [--by model|conversation|tenant|day] [--since T] [--until T] [--all-tenants] [--json]", storeUsage},
	}
}

var storeOrder = []string{"import", "append", "export", "list", "search", "show", "usage", "rm", "prune"}

func runStore(e *env, args []string) error {
	if len(args) == 0 {
		return usagef("missing subcommand: %s", strings.Join(storeOrder, ", "))
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprintln(e.stdout, "convo store: keep conversations in a database.\n\nSubcommands:")
		for _, name := range storeOrder {
			fmt.Fprintf(e.stdout, "  convo store %s\n", storeCommands[name].usage)
		}
		fmt.Fprintf(e.stdout, "\nEach takes --db (default $CONVO_DB, else %s, a SQLite file in the working\n"+
			"directory; or a postgres:// URL) and --tenant (default: the empty tenant).\n", backends.DefaultDSN)
		return nil
	}
	sub, ok := storeCommands[args[0]]
	if !ok {
		return usagef("unknown subcommand %q: want one of %s", args[0], strings.Join(storeOrder, ", "))
	}
	return sub.run(e, args[1:])
}

// storeFlags is what every subcommand takes: the database and the tenant.
type storeFlags struct {
	db, tenant *string
}

func newStoreFlags(e *env, name string) (*flag.FlagSet, storeFlags) {
	fs := flags(e, "store "+name)
	return fs, storeFlags{
		db:     fs.String("db", e.envOr("CONVO_DB", backends.DefaultDSN), "the store: a SQLite `FILE`, or a postgres:// URL (default $CONVO_DB, else "+backends.DefaultDSN+")"),
		tenant: fs.String("tenant", "", "the `TENANT` whose conversations to use"),
	}
}

// open opens the store and returns it with a context that ends on Ctrl-C;
// done closes both.
func (f storeFlags) open() (context.Context, store.Store, func(), error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	s, err := backends.Open(ctx, *f.db)
	if err != nil {
		stop()
		return nil, nil, nil, fmt.Errorf("opening %s: %w", *f.db, err)
	}
	return ctx, s, func() { s.Close(); stop() }, nil
}

// openExisting opens the store like open, but only a SQLite file that
// exists: reading commands (list, show, export, rm, append) never leave an
// empty database behind a mistyped --db.
func (f storeFlags) openExisting() (context.Context, store.Store, func(), error) {
	if path, ok := sqlitePath(*f.db); ok {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil, fmt.Errorf("no database at %s (convo store import creates one)", path)
		}
	}
	return f.open()
}

// sqlitePath is the file of a SQLite data source name (backends.Open).
func sqlitePath(dsn string) (string, bool) {
	path, _, ok, err := backends.SQLite(dsn)
	return path, ok && err == nil
}

// metaJSON checks a --meta flag: empty is none.
func metaJSON(m string) (json.RawMessage, error) {
	if m == "" {
		return nil, nil
	}
	if !json.Valid([]byte(m)) {
		return nil, usagef("--meta is not JSON: %s", m)
	}
	return json.RawMessage(m), nil
}

func storeImport(e *env, args []string) error {
	fs, sf := newStoreFlags(e, "import")
	id := fs.String("id", "", "the new conversation's `ID` (default: a new one)")
	title := fs.String("title", "", "the conversation's `TITLE` (default: the start of its first user message, else the file's name)")
	metaFlag := fs.String("meta", "", "the conversation's metadata: a `JSON` object")
	from := fs.String("from", "convo", "the input's format: convo, or an export of many conversations ("+archiveNames(archive.Readable())+")")
	maxSize := sizeFlag{convo.DefaultLimits.MaxBytes}
	fs.Var(&maxSize, "max-size", "refuse a history larger than `MiB` (the file's size is checked before reading)")
	args, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	meta, err := metaJSON(*metaFlag)
	if err != nil {
		return err
	}
	if *from != "convo" {
		if *id != "" || *title != "" {
			return usagef("--id and --title name one conversation: with --from %s each keeps its own", *from)
		}
		return storeImportArchive(e, sf, *from, meta, args)
	}
	c, err := importStream(e, sf, store.Conversation{ID: *id, Tenant: *sf.tenant, Title: *title, Meta: meta}, args, maxSize.bytes)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, c.ID)
	return nil
}

// defaultTitle names an imported conversation given no --title: by the
// first line of its first user message, as chat applications do, else by
// the file it came from. The canonical format has no title, so without
// this every import would be untitled.
func defaultTitle(h convo.History, args []string) string {
	for _, m := range h {
		if m.Role != convo.RoleUser {
			continue
		}
		if t, _, _ := strings.Cut(strings.TrimSpace(m.Text()), "\n"); t != "" {
			if r := []rune(t); len(r) > 80 {
				t = strings.TrimSpace(string(r[:79])) + "…"
			}
			return t
		}
	}
	if len(args) > 0 && args[0] != "-" {
		base := filepath.Base(args[0])
		return strings.TrimSuffix(base, filepath.Ext(base))
	}
	return ""
}

// oneID parses a subcommand whose one argument is a conversation id.
func oneID(fs *flag.FlagSet, args []string) (string, error) {
	args, err := parse(fs, args, 1)
	if err != nil {
		return "", err
	}
	if len(args) == 0 {
		return "", usagef("missing conversation ID")
	}
	return args[0], nil
}

func storeExport(e *env, args []string) error {
	fs, sf := newStoreFlags(e, "export")
	lines := fs.Bool("lines", false, "write JSON Lines (one message a line) instead of the envelope")
	id, err := oneID(fs, args)
	if err != nil {
		return err
	}
	ctx, s, done, err := sf.openExisting()
	if err != nil {
		return err
	}
	defer done()
	return store.Export(ctx, s, *sf.tenant, id, e.stdout, *lines)
}

// storeSearch prints the messages that hold every word, newest
// conversation first: one line each, or one JSON object a line.
func storeSearch(e *env, args []string) error {
	fs, sf := newStoreFlags(e, "search")
	limit := fs.Int("limit", store.DefaultSearchLimit, "print at most `N` messages (0: all)")
	asJSON := fs.Bool("json", false, "one JSON object a line instead of a table")
	words, err := parse(fs, args, 1000)
	if err != nil {
		return err
	}
	if len(words) == 0 {
		return usagef("missing the words to search for")
	}
	if *limit < 0 {
		return usagef("--limit must not be negative")
	}
	ctx, s, done, err := sf.openExisting()
	if err != nil {
		return err
	}
	defer done()
	var tw *tabwriter.Writer
	if !*asJSON {
		tw = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CONVERSATION\tMESSAGE\tROLE\tTEXT")
	}
	err = eachPage(*limit, store.MaxSearchLimit, func(n int, after string) ([]store.Hit, string, error) {
		return s.Search(ctx, *sf.tenant, strings.Join(words, " "), store.SearchOptions{Limit: n, After: after})
	}, func(h store.Hit) error {
		if tw != nil {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", h.Conversation.ID, h.Index, h.Role, esc(oneLine(h.Snippet)))
			return nil
		}
		b, err := json.Marshal(struct {
			Conversation string   `json:"conversation"`
			Title        string   `json:"title,omitempty"`
			Message      string   `json:"message"`
			Index        int      `json:"index"`
			Role         string   `json:"role"`
			Snippet      string   `json:"snippet"`
			Highlights   [][2]int `json:"highlights"`
		}{h.Conversation.ID, h.Conversation.Title, h.MessageID, h.Index, string(h.Role), h.Snippet, h.Highlights})
		if err == nil {
			fmt.Fprintf(e.stdout, "%s\n", b)
		}
		return err
	})
	if err != nil {
		return err
	}
	if tw != nil {
		return tw.Flush()
	}
	return nil
}

func storeList(e *env, args []string) error {
	fs, sf := newStoreFlags(e, "list")
	title := fs.String("title", "", "only conversations whose title contains `TEXT`")
	metaFlag := fs.String("meta", "", "only conversations whose metadata has these members: a `JSON` object")
	limit := fs.Int("limit", 0, "list at most `N` conversations (0: all)")
	asJSON := fs.Bool("json", false, "one JSON object a line instead of a table")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if *limit < 0 {
		return usagef("--limit must not be negative")
	}
	meta, err := metaJSON(*metaFlag)
	if err != nil {
		return err
	}
	ctx, s, done, err := sf.openExisting()
	if err != nil {
		return err
	}
	defer done()
	var tw *tabwriter.Writer
	if !*asJSON {
		tw = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tMESSAGES\tVERSION\tUPDATED\tTITLE")
	}
	err = eachPage(*limit, store.MaxListLimit, func(n int, after string) ([]store.Conversation, string, error) {
		return s.List(ctx, *sf.tenant, store.ListOptions{Title: *title, Meta: meta, Limit: n, After: after})
	}, func(c store.Conversation) error {
		if tw != nil {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", c.ID, c.Messages, c.Version, c.Updated.Format(time.DateTime), oneLine(c.Title))
			return nil
		}
		b, err := json.Marshal(describeConv(c))
		if err == nil {
			fmt.Fprintf(e.stdout, "%s\n", b)
		}
		return err
	})
	if err != nil {
		return err
	}
	if tw != nil {
		return tw.Flush()
	}
	return nil
}

// convDescription is a conversation's description as convo store prints it
// in JSON.
type convDescription struct {
	ID         string          `json:"id"`
	Tenant     string          `json:"tenant,omitempty"`
	Title      string          `json:"title,omitempty"`
	Meta       json.RawMessage `json:"meta,omitempty"`
	Version    int64           `json:"version"`
	Messages   int             `json:"messages"`
	ForkedFrom string          `json:"forked_from,omitempty"`
	ForkedAt   int             `json:"forked_at,omitempty"`
	Created    time.Time       `json:"created"`
	Updated    time.Time       `json:"updated"`
}

func describeConv(c store.Conversation) convDescription {
	return convDescription{ID: c.ID, Tenant: c.Tenant, Title: c.Title, Meta: c.Meta, Version: c.Version, Messages: c.Messages,
		ForkedFrom: c.ForkedFrom, ForkedAt: c.ForkedAt, Created: c.Created, Updated: c.Updated}
}

func storeShow(e *env, args []string) error {
	fs, sf := newStoreFlags(e, "show")
	asJSON := fs.Bool("json", false, "print the conversation as one JSON object {id, tenant, title, meta, version, messages, forked_from, forked_at, created, updated}, then its messages as canonical JSON Lines")
	color := fs.Bool("color", e.color, "colour the transcript (default: when stdout is a terminal)")
	id, err := oneID(fs, args)
	if err != nil {
		return err
	}
	ctx, s, done, err := sf.openExisting()
	if err != nil {
		return err
	}
	defer done()
	h, c, err := s.Load(ctx, *sf.tenant, id, 0)
	if err != nil {
		return err
	}
	w := e.stdout
	if *asJSON {
		b, err := json.Marshal(describeConv(c))
		if err != nil {
			return err
		}
		lines, err := convo.MarshalLines(h)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n%s", b, lines)
		return err
	}
	fmt.Fprintf(w, "id:       %s\n", c.ID)
	if c.Title != "" {
		fmt.Fprintf(w, "title:    %s\n", oneLine(c.Title))
	}
	if c.Meta != nil {
		fmt.Fprintf(w, "meta:     %s\n", c.Meta)
	}
	fmt.Fprintf(w, "version:  %d\nmessages: %d\n", c.Version, c.Messages)
	if c.ForkedFrom != "" {
		fmt.Fprintf(w, "forked:   from %s at message %d\n", c.ForkedFrom, c.ForkedAt)
	}
	fmt.Fprintf(w, "created:  %s\nupdated:  %s\n", c.Created.Format(time.RFC3339), c.Updated.Format(time.RFC3339))
	if len(h) > 0 {
		fmt.Fprintln(w)
	}
	t := transcript{w: w, color: *color}
	for i, m := range h {
		t.message(i, m)
	}
	return nil
}

func storeRemove(e *env, args []string) error {
	fs, sf := newStoreFlags(e, "rm")
	args, err := parse(fs, args, int(^uint(0)>>1))
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return usagef("missing conversation ID")
	}
	ctx, s, done, err := sf.openExisting()
	if err != nil {
		return err
	}
	defer done()
	var failed []string
	for _, id := range args {
		if err := s.Delete(ctx, *sf.tenant, id); err != nil {
			failed = append(failed, err.Error())
			continue
		}
		fmt.Fprintf(e.stdout, "removed %s\n", id)
	}
	if failed != nil {
		return fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return nil
}

// eachPage gives each item of a paged store listing to each, fetching pages
// of at most max items after the cursor until the listing ends or limit
// items (0: no limit) were given.
func eachPage[T any](limit, max int, fetch func(n int, after string) ([]T, string, error), each func(T) error) error {
	after := ""
	for n := 0; ; {
		size := max
		if limit > 0 {
			size = min(limit-n, max)
		}
		page, next, err := fetch(size, after)
		if err != nil {
			return err
		}
		for _, x := range page {
			if err := each(x); err != nil {
				return err
			}
		}
		n += len(page)
		if next == "" || (limit > 0 && n >= limit) {
			return nil
		}
		after = next
	}
}
