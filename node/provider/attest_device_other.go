//go:build !linux

package provider

import "fmt"

// openDevice: SEV-SNP guests run Linux, and the guest interfaces
// (configfs-tsm, /dev/sev-guest) exist only there; elsewhere (a darwin
// release) the source is refused with the reason.
func openDevice(device string) (QuoteProvider, error) {
	return nil, fmt.Errorf("%q: %w: SEV-SNP attestation needs a Linux guest", device, errNoDevice)
}
