// Package quantile estimates a latency quantile per provider in constant space
// with the P² algorithm (R. Jain and I. Chlamtac, "The P² algorithm for
// dynamic calculation of quantiles and histograms without storing
// observations", CACM 28(10), 1985).
//
// Five markers track the minimum, the p/2-, p- and (1+p)/2-quantiles and
// the maximum. Each observation shifts the markers' positions; an inner
// marker more than one position from where it should be moves by one, its
// height predicted by the piecewise-parabolic formula, or linearly towards
// the neighbour it moves to when the parabola would leave the interval
// between its neighbours (which would break marker ordering).
//
// Departures from the paper, all for small samples and high quantiles:
//
//   - The first Warmup observations (DefaultWarmup = 20) are kept sorted and
//     Quantile answers the exact sample quantile (Hyndman-Fan type 7, linear
//     interpolation between order statistics). The paper's answer for
//     n < 5 is undefined and its estimate for p = 0.95 after five samples is
//     the sample median.
//   - When the warm-up buffer fills, the markers start at the order
//     statistics nearest their desired positions (kept strictly increasing),
//     not at ranks 1..5. With Warmup = 5 this is exactly the paper's
//     initialisation, so NewWithWarmup(p, 5) is the classic algorithm.
//   - Desired positions are computed as 1 + (n-1)·f_i, not accumulated, so
//     they do not drift over long streams.
//   - NaN and ±Inf are ignored rather than corrupting every later estimate.
//
// Tracker, the per-provider wrapper the router uses, runs the estimator on
// log(latency): the quantile is unchanged (quantiles commute with monotone
// maps) and the parabolic step is much better behaved on heavy right tails:
// on ten seeded Pareto(α=1.1) streams of 10^5 the mean p95 error against
// the exact quantile falls from 5.4 % (worst 13 %) to 0.26 % (worst 0.9 %).
// It also keeps a recent (EWMA) mean, bounds the p95's memory with a
// window, and can take censored samples (cancelled hedge losers).
package quantile
