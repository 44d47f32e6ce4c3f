package config

import (
	"net/url"
	"strings"
)

// Telemetry configures the OpenTelemetry export (internal/telemetry):
// traces of every turn (the turn, its model calls, each tool call with
// its decision and run) and counters, sent as OTLP over HTTP (JSON) to a
// collector. Off unless an endpoint is set. What is sent is an allowlist
// of names, rule ids, decisions, counts and durations, never arguments,
// results or message text (docs/ARCHITECTURE.md, "Telemetry").
type Telemetry struct {
	// Endpoint is the collector's OTLP/HTTP base URL, such as
	// "http://127.0.0.1:4318": /v1/traces and /v1/metrics are appended.
	// It is the operator's own configuration (like a chat channel's
	// api_base), so a loopback or private address is allowed. Empty (the
	// default) means telemetry off.
	Endpoint string `toml:"endpoint"`
	// ServiceName is the service.name homard reports. Missing means
	// "homard".
	ServiceName string `toml:"service_name"`
	// HeadersSecret, when set, names a vault secret bound to the
	// endpoint's host (`homard secret set NAME --host HOST:PORT`, an
	// Authorization bearer by default, or --header X-Api-Key --format
	// '{}'; --allow-http for an http endpoint): its header is sent with
	// every export. Empty means none.
	HeadersSecret string `toml:"headers_secret"`
	// LogRequests keeps a line per model request — its sizes, message
	// roles and tool names — in data/model-requests.jsonl (0600, rotated
	// at 16 MiB), read with `homard logs`. Missing means true (after Load
	// it is never nil).
	LogRequests *bool `toml:"log_requests"`
	// LogModelInputs adds each message's text to those lines, redacted.
	// Missing means false.
	LogModelInputs bool `toml:"log_model_inputs"`
}

// Requests reports telemetry.log_requests (true when missing).
func (t Telemetry) Requests() bool { return t.LogRequests == nil || *t.LogRequests }

// DefaultTelemetryService is telemetry.service_name when missing.
const DefaultTelemetryService = "homard"

func applyTelemetryDefaults(t *Telemetry) {
	orDefault(&t.ServiceName, DefaultTelemetryService)
	if t.LogRequests == nil {
		on := true
		t.LogRequests = &on
	}
}

func validateTelemetry(t *Telemetry, ps *problems) {
	if t.Endpoint != "" {
		u, err := url.Parse(t.Endpoint)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
			ps.add("telemetry.endpoint = %q: want an absolute http or https URL such as %q, or \"\" for telemetry off", t.Endpoint, "http://127.0.0.1:4318")
		case u.User != nil:
			ps.add("telemetry.endpoint = %q: credentials do not belong in the URL; name a vault secret in telemetry.headers_secret", u.Redacted())
		case u.RawQuery != "" || u.Fragment != "":
			ps.add("telemetry.endpoint = %q: want the base URL only, without a query or fragment", t.Endpoint)
		}
	}
	if strings.TrimSpace(t.ServiceName) == "" || len(t.ServiceName) > 128 {
		ps.add("telemetry.service_name = %q: want a name of 1 to 128 characters (the default is %q)", t.ServiceName, DefaultTelemetryService)
	}
	if t.LogModelInputs && !t.Requests() {
		ps.add("telemetry.log_model_inputs = true needs telemetry.log_requests = true (the lines it adds text to)")
	}
	if t.HeadersSecret != "" {
		if !secretNameRE().MatchString(t.HeadersSecret) {
			ps.add("telemetry.headers_secret = %q: want a vault secret name (lowercase letters, digits, - and _)", t.HeadersSecret)
		}
		if t.Endpoint == "" {
			ps.add("telemetry.headers_secret = %q: set telemetry.endpoint too, or leave it out", t.HeadersSecret)
		}
	}
}

func renderTelemetry(w func(string, ...any), t *Telemetry) {
	w(`
[telemetry]
# OpenTelemetry traces and metrics, sent as OTLP over HTTP (JSON) to this
# collector, such as "http://127.0.0.1:4318"; "" (the default) sends
# nothing. A trace per turn: the turn, each model call, each tool call
# with its decision, rule, risk and durations. Never arguments, results,
# message text or secrets.
endpoint = %s
# The service.name reported.
service_name = %s
# A vault secret bound to the collector's host, sent as its header (an API
# key); "" sends none.
headers_secret = %s
# A line per model request — its sizes, message roles and tool names — in
# data/model-requests.jsonl, read with "homard logs --follow".
log_requests = %t
# Add each message's text to those lines (redacted). Off by default: the
# file then holds what you and your tools wrote.
log_model_inputs = %t
`, quote(t.Endpoint), quote(t.ServiceName), quote(t.HeadersSecret), t.Requests(), t.LogModelInputs)
}
