package app

import (
	"github.com/homard/homard/internal/owner"
	"github.com/homard/homard/internal/store"
)

// APIToken describes a token for the HTTP API; the token itself is shown
// only once, by the owner facade's TokenCreate.
type APIToken = store.APIToken

// ErrNoToken is returned by TokenRevoke for an unknown or revoked id.
var ErrNoToken = owner.ErrNoToken
