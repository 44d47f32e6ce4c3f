package config

import (
	"strings"
	"testing"
)

func TestTelemetryDefaults(t *testing.T) {
	c, err := Load(writeConfig(t, baseConfig))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Telemetry; got.Endpoint != "" || got.ServiceName != "homard" || got.HeadersSecret != "" || !got.Requests() || got.LogModelInputs {
		t.Errorf("Load without [telemetry] = %+v; want off (no endpoint), service homard, requests logged without their text", c.Telemetry)
	}
}

func TestTelemetrySection(t *testing.T) {
	for _, tt := range []struct {
		name, section string
		want          Telemetry // when ok
		err           []string
	}{
		{"off", `endpoint = ""`, Telemetry{ServiceName: "homard"}, nil},
		{"loopback http", `endpoint = "http://127.0.0.1:4318"`, Telemetry{Endpoint: "http://127.0.0.1:4318", ServiceName: "homard"}, nil},
		{"https with a path, a name and a secret", "endpoint = \"https://otel.example/base/\"\nservice_name = \"homard-lab\"\nheaders_secret = \"otel-key\"",
			Telemetry{Endpoint: "https://otel.example/base/", ServiceName: "homard-lab", HeadersSecret: "otel-key"}, nil},
		{"no scheme", `endpoint = "127.0.0.1:4318"`, Telemetry{}, []string{`telemetry.endpoint = "127.0.0.1:4318": want an absolute http or https URL`}},
		{"other scheme", `endpoint = "grpc://h:4317"`, Telemetry{}, []string{`telemetry.endpoint = "grpc://h:4317"`}},
		{"credentials", `endpoint = "http://u:pw@h:4318"`, Telemetry{}, []string{"credentials do not belong in the URL", "u:xxxxx@h"}},
		{"query", `endpoint = "http://h:4318/?k=v"`, Telemetry{}, []string{"without a query or fragment"}},
		{"blank name", `service_name = " "`, Telemetry{}, []string{`telemetry.service_name = " "`}},
		{"bad secret name", "endpoint = \"http://h:4318\"\nheaders_secret = \"Otel Key\"", Telemetry{}, []string{`telemetry.headers_secret = "Otel Key": want a vault secret name`}},
		{"secret without endpoint", `headers_secret = "otel-key"`, Telemetry{}, []string{"set telemetry.endpoint too"}},
		{"unknown key", `url = "http://h"`, Telemetry{}, []string{"unknown key telemetry.url", "endpoint, service_name, headers_secret, log_requests, log_model_inputs"}},
		{"request log off", "log_requests = false", Telemetry{ServiceName: "homard", LogRequests: ptrTo(false)}, nil},
		{"inputs", "log_model_inputs = true", Telemetry{ServiceName: "homard", LogRequests: ptrTo(true), LogModelInputs: true}, nil},
		{"inputs without the log", "log_requests = false\nlog_model_inputs = true", Telemetry{}, []string{"telemetry.log_model_inputs = true needs telemetry.log_requests = true"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeConfig(t, baseConfig+"\n[telemetry]\n"+tt.section+"\n"))
			if tt.err != nil {
				if err == nil {
					t.Fatalf("Load with [telemetry] %q = %+v; want an error", tt.section, c.Telemetry)
				}
				for _, w := range tt.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Load with [telemetry] %q: error\n%s\ndoes not contain %q", tt.section, err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Load with [telemetry] %q: %v", tt.section, err)
			}
			got, want := c.Telemetry, tt.want
			if got.Endpoint != want.Endpoint || got.ServiceName != want.ServiceName || got.HeadersSecret != want.HeadersSecret ||
				got.Requests() != want.Requests() || got.LogModelInputs != want.LogModelInputs {
				t.Errorf("Load with [telemetry] %q = %+v; want %+v", tt.section, c.Telemetry, tt.want)
			}
		})
	}
}
