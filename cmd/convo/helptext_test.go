package main

import (
	"encoding/base64"
	"regexp"
	"strings"
	"testing"
)

// helpTexts returns the -h text of every command and store subcommand.
func helpTexts(t *testing.T) map[string]string {
	t.Helper()
	texts := map[string]string{}
	for n := range commands {
		if n != "boom" && n != "store" {
			_, errs, _ := runCLI(t, "", n, "-h")
			texts[n] = errs
		}
	}
	for n := range storeCommands {
		_, errs, _ := runCLI(t, "", "store", n, "-h")
		texts["store "+n] = errs
	}
	return texts
}

// TestHelpSaysEachThingOnce: no format is listed twice in a flag's
// description, no default is printed twice, and no internal Go name
// reaches a user.
func TestHelpSaysEachThingOnce(t *testing.T) {
	twoDefaults := regexp.MustCompile(`default[^\n]*\(default `)
	internal := regexp.MustCompile(`\b[a-z]+[A-Z][A-Za-z]*\b`) // camelCase: a Go identifier
	for n, text := range helpTexts(t) {
		if twoDefaults.MatchString(text) {
			t.Errorf("convo %s -h prints a default twice:\n%s", n, twoDefaults.FindString(text))
		}
		for _, line := range strings.Split(text, "\n") {
			if m := internal.FindString(line); m != "" && !strings.Contains(line, "$") {
				t.Errorf("convo %s -h names %q: %s", n, m, line)
			}
			if strings.HasPrefix(strings.TrimSpace(line), "usage:") || !strings.Contains(line, ", ") {
				continue
			}
			seen := map[string]bool{}
			for _, w := range regexp.MustCompile(`[a-z][a-z-]+`).FindAllString(line, -1) {
				if strings.Contains(w, "-") && seen[w] && w != "claude-code" {
					t.Errorf("convo %s -h names %q twice: %s", n, w, line)
				}
				seen[w] = true
			}
			for _, f := range []string{"finetune", "sharegpt", "markdown", "chatgpt"} {
				if strings.Count(line, f+",")+strings.Count(line, f+")")+strings.Count(line, f+"\n") > 1 ||
					strings.Count(line, " "+f) > 1 {
					t.Errorf("convo %s -h lists %s twice: %s", n, f, line)
				}
			}
		}
	}
}

// TestHelpCommand: "convo help X" is X's own help, on stdout.
func TestHelpCommand(t *testing.T) {
	for _, args := range [][]string{{"validate"}, {"convert"}, {"store", "import"}} {
		out, _, code := runCLI(t, "", append([]string{"help"}, args...)...)
		want := "usage: convo " + strings.Join(args, " ")
		if code != 0 || !strings.HasPrefix(out, want) {
			t.Errorf("convo help %s: exit %d, stdout does not start %q:\n%s", strings.Join(args, " "), code, want, out)
		}
	}
	if _, errs, code := runCLI(t, "", "help", "frobnicate"); code != 2 || !strings.Contains(errs, `unknown command "frobnicate"`) {
		t.Errorf("convo help frobnicate: exit %d, %q", code, errs)
	}
}

// TestReplyUnknownFormatNamesOnlyReplyFormats: the list after a refused
// format holds no outside format, the refused one least of all.
func TestReplyUnknownFormatNamesOnlyReplyFormats(t *testing.T) {
	_, errs, code := runCLI(t, "{}", "reply", "--from", "chatgpt")
	if code != 2 || !strings.Contains(errs, `unknown format "chatgpt" for replies (known: openai-chat,`) {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Count(errs, "chatgpt") != 1 || strings.Contains(errs, "read ") {
		t.Errorf("the known formats name what was refused: %s", errs)
	}
}

// TestMediaSizeAgrees: show and the Markdown export give an inline image's
// size in decoded bytes, the same number (145, not 147).
func TestMediaSizeAgrees(t *testing.T) {
	png := base64.StdEncoding.EncodeToString(make([]byte, 145))
	doc := `[{"role":"user","parts":[{"type":"image","media_type":"image/png","data":"` + png + `"}]}]`
	out, errs, code := runCLI(t, doc, "show")
	if code != 0 || !strings.Contains(out, "145 B inline") {
		t.Errorf("show: exit %d, %s%s", code, out, errs)
	}
	out, errs, code = runCLI(t, doc, "convert", "--from", "convo", "--to", "markdown")
	if code != 0 || !strings.Contains(out, "image/png, 145 bytes inline") {
		t.Errorf("markdown: exit %d, %s%s", code, out, errs)
	}
}
