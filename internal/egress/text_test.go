package egress

import "testing"

func TestHTMLToText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<p>Hello <b>world</b>!</p>", "Hello world!"},
		{"<html><head><title>T</title><style>p{color:red}</style><script>alert(1)</script></head><body><p>x</p></body></html>", "T\nx"},
		{"<p>see <a href='https://evil.example/'>the docs</a> now</p>", "see the docs now"},
		{"<noscript>enable js</noscript>visible", "visible"},
		{"<template><p>hidden</p></template>shown", "shown"},
		{"<svg><svg><text>a</text></svg><text>b</text></svg>after", "after"},
		{"a &amp; b &lt;c&gt; &eacute;&#x41;", "a & b <c> éA"},
		{"<ul><li>one</li><li>two</li></ul>", "one\ntwo"},
		{"line\n   with\t\tspaces", "line with spaces"},
		{"a<br>b", "a\nb"},
		{"a<br><br><br><br>b", "a\n\nb"},
		{"<script>never closed <p>text", ""},
		{"<div>a</div>\n\n\n<div>b</div>", "a\nb"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := HTMLToText([]byte(tt.in)); got != tt.want {
			t.Errorf("HTMLToText(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
