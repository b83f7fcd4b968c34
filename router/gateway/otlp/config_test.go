package otlp

import "testing"

// TestEndpointNormalized: a good endpoint validates, and an http one gets
// the standard traces path when it has none.
func TestEndpointNormalized(t *testing.T) {
	for _, c := range []struct{ proto, in, want string }{
		{ProtocolGRPC, "http://127.0.0.1:4317", "http://127.0.0.1:4317"},
		{ProtocolHTTP, "https://collector.example:4318", "https://collector.example:4318/v1/traces"},
		{ProtocolHTTP, "http://[::1]:4318/otlp/traces", "http://[::1]:4318/otlp/traces"},
	} {
		tc := DefaultConfig()
		tc.Protocol, tc.OTLPEndpoint = c.proto, c.in
		if err := tc.Validate(); err != nil {
			t.Fatalf("%s %s: %v", c.proto, c.in, err)
		}
		if u, _ := tc.endpoint(); u.String() != c.want {
			t.Fatalf("%s %s: endpoint %s, want %s", c.proto, c.in, u, c.want)
		}
	}
}

// FuzzTelemetryEndpoint: any otlp_endpoint is refused or normalizes to an
// endpoint that validates again to itself, with host:port and an http(s)
// scheme.
func FuzzTelemetryEndpoint(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:4317", "https://c:4318/v1/traces", "c:4317", "http://[::1]:1/", "http://a:1?x", ""} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, endpoint string, grpc bool) {
		tc := DefaultConfig()
		tc.OTLPEndpoint = endpoint
		if !grpc {
			tc.Protocol = ProtocolHTTP
		}
		if tc.Validate() != nil || endpoint == "" {
			return
		}
		u, err := tc.endpoint()
		if err != nil {
			t.Fatalf("%q validates but endpoint fails: %v", endpoint, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Port() == "" {
			t.Fatalf("%q → %s", endpoint, u)
		}
		tc.OTLPEndpoint = u.String()
		u2, err := tc.endpoint()
		if err != nil || u2.String() != u.String() {
			t.Fatalf("%q → %s → %v %v", endpoint, u, u2, err)
		}
	})
}
