//go:build !postgres

package chats

import (
	"context"
	"errors"
	"time"

	"github.com/homard/homard/internal/channel/chat"
)

// deliverDue: a build without -tags postgres has no job queue to hand
// parts to (deliver.go), so its outbox loop sends them itself.
func (c *Runner) deliverDue(ctx context.Context, a chat.Adapter) time.Time {
	return c.sendDue(ctx, a)
}

// drain is deliver.go's; no job calls it in this build.
func (c *Runner) drain(context.Context, string, string) (time.Time, error) {
	return time.Time{}, errors.New("chat deliveries as jobs need -tags postgres") // lang:en
}
