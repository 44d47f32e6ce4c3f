//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"syscall"
	"time"
)

type command struct {
	path      string
	argv      []string
	env       []string
	dir       string
	stdin     []byte
	cred      *syscall.Credential
	limits    Limits
	timeout   time.Duration
	maxOutput int
}

func execute(context.Context, command) (Result, error) {
	return Result{}, errors.New("process sandboxing is only implemented on Linux")
}
