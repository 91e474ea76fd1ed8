package server

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// ParseTokens reads a tokens file: one "TOKEN TENANT" pair a line, separated
// by white space. Blank lines and lines starting with # are ignored. A line
// of another shape, an empty or malformed tenant and a token listed twice are
// errors naming the line; the token itself never appears in an error.
func ParseTokens(r io.Reader) (map[string]string, error) {
	tokens := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: want \"TOKEN TENANT\", got %d fields", line, len(f))
		}
		if err := add(tokens, f[0], f[1]); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return tokens, nil
}

// ParseTokenList reads the CONVO_TOKENS form of the token map:
// "tok1=tenantA,tok2=tenantB". Spaces around entries are ignored.
func ParseTokenList(s string) (map[string]string, error) {
	tokens := map[string]string{}
	for i, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		tok, ten, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("entry %d: want TOKEN=TENANT", i+1)
		}
		if err := add(tokens, strings.TrimSpace(tok), strings.TrimSpace(ten)); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
	}
	return tokens, nil
}

func add(tokens map[string]string, tok, tenant string) error {
	if err := checkToken(tok, tenant); err != nil {
		return err
	}
	if _, dup := tokens[tok]; dup {
		return fmt.Errorf("token for tenant %q listed twice", tenant)
	}
	tokens[tok] = tenant
	return nil
}
