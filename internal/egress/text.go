package egress

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// skipped elements contribute no text: code, styling, fallbacks and
// embedded documents.
var skipped = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true,
	"svg": true, "math": true, "iframe": true, "object": true,
	"select": true, "canvas": true, "noembed": true, "noframes": true,
}

// blocks end a line of text.
var blocks = map[string]bool{
	"address": true, "article": true, "aside": true, "blockquote": true, "br": true,
	"dd": true, "div": true, "dl": true, "dt": true, "fieldset": true,
	"figcaption": true, "figure": true, "footer": true, "form": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"header": true, "hr": true, "li": true, "main": true, "nav": true, "ol": true,
	"p": true, "pre": true, "section": true, "table": true, "tr": true,
	"td": true, "th": true, "title": true, "ul": true,
}

// HTMLToText returns the readable text of an HTML document: script, style,
// noscript and similar elements are dropped, link text is kept (the href
// is not), entities are decoded, runs of whitespace become one space,
// block elements end lines, and there is at most one blank line in a row.
// It never fails: malformed HTML yields whatever text the tokenizer
// recovers. The output is untrusted content like the input.
func HTMLToText(b []byte) string {
	z := html.NewTokenizer(bytes.NewReader(b))
	var raw strings.Builder
	skip := 0      // depth inside the outermost skipped element
	skipName := "" // its tag name
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return tidy(raw.String())
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			tag := string(name)
			switch {
			case skip > 0:
				if tag == skipName && tt == html.StartTagToken {
					skip++
				} else if tag == skipName && tt == html.EndTagToken {
					skip--
				}
			case skipped[tag]:
				if tt == html.StartTagToken {
					skip, skipName = 1, tag
				}
			case blocks[tag]:
				raw.WriteByte('\n')
			}
		case html.TextToken:
			if skip == 0 {
				raw.WriteString(strings.NewReplacer("\n", " ", "\r", " ").Replace(string(z.Text())))
			}
		}
	}
}

// tidy collapses whitespace inside lines and keeps at most one blank line.
func tidy(s string) string {
	var out strings.Builder
	blank := 0
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			blank++
			continue
		}
		if out.Len() > 0 {
			out.WriteString("\n")
			if blank > 1 {
				out.WriteString("\n")
			}
		}
		out.WriteString(line)
		blank = 0
	}
	return out.String()
}
