package chats

import (
	"errors"

	"github.com/homard/homard/internal/config"
)

// Errors of the chat service.
var (
	// ErrAdapterMissing: the platform's adapter is not built into this homard.
	ErrAdapterMissing = errors.New("this homard has no adapter for the platform; update homard or disable the channel") // lang:en
	// Pairing errors.
	ErrPairExpired  = errors.New("the pairing code expired before it was used; run `homard pair` again") // lang:en
	ErrPairPlatform = errors.New("unknown chat platform (want " + config.PlatformList("or") + ")")       // lang:en
)
