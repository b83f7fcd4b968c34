package gateway

import (
	"log/slog"

	"github.com/tenzrod/tenzrod/router/pricing"
)

// LogSurchargeSource says at start where the verification surcharges come
// from, so an operator who set [router.surcharges] on a chain node knows
// they are not used: with a chain they are the chain's surcharge_* params,
// without one the configured fallback.
func LogSurchargeSource(log *slog.Logger, onChain bool, configured pricing.Surcharges) {
	if onChain {
		msg := "verification surcharges are the chain's surcharge_* params (tenzro_getParams); [router.surcharges] is ignored with a chain"
		if configured != DefaultConfig().Surcharges {
			// Set by hand: say louder that it has no effect here.
			log.Warn(msg, "ignored", configured)
			return
		}
		log.Info(msg)
		return
	}
	log.Info("no chain: verification surcharges are the configured [router.surcharges] fallback",
		"none", configured.None, "receipt", configured.Receipt, "optimistic", configured.Optimistic, "tee", configured.TEE)
}
