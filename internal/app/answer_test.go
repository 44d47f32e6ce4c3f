package app

import (
	"testing"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/channel"
)

// TestAnswerOf: every channel choice reaches the agent as what it means
// for the call; an unknown one leaves the call pending (never approves).
func TestAnswerOf(t *testing.T) {
	for ch, want := range map[channel.Choice]agent.Answer{
		channel.Once: agent.Approved, channel.Session: agent.Approved, channel.Always: agent.Approved,
		channel.Recorded: agent.Approved, channel.Deny: agent.Denied, channel.Lapsed: agent.Lapsed,
		channel.Leave: agent.Left, "maybe": agent.Left,
	} {
		if got := answerOf(ch); got != want {
			t.Errorf("answerOf(%q) = %d; want %d", ch, got, want)
		}
	}
}
