//go:build linux

package provider

import (
	"fmt"

	"github.com/google/go-sev-guest/abi"
	"github.com/google/go-sev-guest/client"
)

// openDevice opens the SEV-SNP guest interface device names.
func openDevice(device string) (QuoteProvider, error) {
	switch device {
	case DeviceAuto:
		qp, err := client.GetQuoteProvider()
		if err != nil {
			return nil, fmt.Errorf("%q: %w: neither configfs-tsm (/sys/kernel/config/tsm/report) nor /dev/sev-guest answers: %w", device, errNoDevice, err)
		}
		return qp, nil
	case DeviceConfigFS:
		qp := &client.LinuxConfigFsQuoteProvider{}
		if !qp.IsSupported() {
			return nil, fmt.Errorf("%q: %w: /sys/kernel/config/tsm/report has no sev_guest provider", device, errNoDevice)
		}
		return qp, nil
	}
	d := &client.LinuxDevice{}
	if err := d.Open(device); err != nil {
		return nil, fmt.Errorf("%q: %w: %w", device, errNoDevice, err)
	}
	_ = d.Close()
	return pathQuoteProvider(device), nil
}

// pathQuoteProvider asks the SEV guest device at a configured path (the
// library's own ioctl provider reads the path from a global flag).
type pathQuoteProvider string

func (p pathQuoteProvider) GetRawQuote(reportData [64]byte) ([]uint8, error) {
	d := &client.LinuxDevice{}
	if err := d.Open(string(p)); err != nil {
		return nil, err
	}
	defer d.Close() //nolint:errcheck // the quote is read; the device holds nothing of ours
	//nolint:staticcheck // SA1019: the quote providers that replace it cannot take a device path
	report, certs, err := client.GetRawExtendedReportAtVmpl(d, reportData, 0)
	if err != nil {
		return nil, err
	}
	if len(report) < abi.ReportSize {
		return nil, fmt.Errorf("sev guest device returned a %d-byte report", len(report))
	}
	return append(report[:abi.ReportSize:abi.ReportSize], certs...), nil
}
