// Package mcp is homard's client for Model Context Protocol servers, and
// the only package that imports github.com/modelcontextprotocol/go-sdk.
//
// Contract: a Server is one configured MCP server, reached over stdio (a
// process started by a Launcher, read with a 4 MiB line cap) or over
// streamable HTTP (a bearer token or an OAuth login, no redirects, an
// 8 MiB body cap). Login runs the MCP authorization flow for a url server
// (discovery, dynamic registration, PKCE S256, a loopback Redirect or a
// pasted address); a login's token is refreshed before it expires and
// sent, like a static one, only to the endpoint's scheme and host. The
// client advertises no capabilities (no roots, sampling or elicitation),
// never subscribes to resources, never follows resource links, and drops
// the server's log messages. A server's instructions are kept for the
// trust hash and never handed to the model.
//
// Tools lists a server's tools (at most 20 pages), maps each name into the
// registry's alphabet as mcp__<server>__<tool>, refuses the ones that
// collide or are too long, and fingerprints the whole list with the
// instructions (trust on first use: Fingerprint). Call runs one tool only
// while the server's current listing matches the fingerprint the caller
// pinned (Pin), so a server that changes its tools after being trusted
// gets no calls until it is trusted again. A stdio server that crashes is
// restarted on the next call, with backoff; Close kills its process group.
//
// CompileSchema turns a tool's input schema into a Schema whose Check the
// caller runs on every call's arguments before planning it: only names the
// schema declares, and values valid against it. A tool whose schema cannot
// be checked completely and safely is refused in the listing.
//
// The package is a library: it decides nothing about risk or trust. The
// caller (internal/app) builds the registry's tools, asks the arbiter, keeps
// the trusted fingerprints and turns Blobs into artifacts.
package mcp
