package chats

import (
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/chat"
)

// TestChatsCardButtons: a critical plan offers only once and deny; data
// fits every platform.
func TestChatsCardButtons(t *testing.T) {
	tests := []struct {
		risk string
		want []string
	}{
		{"high", []string{"Approve once", "This session", "Always", "Deny"}},
		{"critical", []string{"Approve once", "Deny"}},
	}
	for _, tt := range tests {
		c := channel.Card{ApprovalID: "ap_0123456789abcdef0123", PlanHash: "sha256:" + strings.Repeat("ab", 32), Risk: tt.risk}
		var got []string
		for _, b := range CardButtons(c) {
			got = append(got, b.Label)
			if len(b.Data) > chat.MaxButtonData {
				t.Errorf("%s: data %q is %d bytes; want at most %d", tt.risk, b.Data, len(b.Data), chat.MaxButtonData)
			}
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("CardButtons(risk %s) = %q; want %q", tt.risk, got, tt.want)
		}
	}
}

// TestParseButton: the data CardButtons writes is read back as the
// approval, hash prefix and answer it names; data of any other shape is
// not a homard card's.
func TestParseButton(t *testing.T) {
	c := channel.Card{ApprovalID: "ap_1", PlanHash: "sha256:" + strings.Repeat("ab", 32), Risk: "high"}
	for _, b := range CardButtons(c) {
		id, h12, choice, ok := parseButton(b.Data)
		if !ok || id != "ap_1" || h12 != strings.Repeat("ab", 6) || choiceCodes[b.Data[len(b.Data)-1:]] != choice {
			t.Errorf("parseButton(%q) = %q, %q, %q, %v; want ap_1, abab…, its answer", b.Data, id, h12, choice, ok)
		}
	}
	for _, data := range []string{"", "a:ap_1:abababababab", "b:ap_1:abababababab:o", "a::abababababab:o", "a:ap_1:abab:o", "a:ap_1:abababababab:x", "a:ap_1:abababababab:o:extra"} {
		if _, _, _, ok := parseButton(data); ok {
			t.Errorf("parseButton(%q) accepted; want refused", data)
		}
	}
}
