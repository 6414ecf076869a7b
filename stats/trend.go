package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// This file holds the trend estimates of the sustainability rule: a
// robust slope with a one-sided confidence bound, and the analysis of a
// refresh sawtooth.

// confidenceAlpha is the one-sided error of a bound judged once: the
// 99.5 % bounds below are wrong for about one step in 200. A step
// judged at several looks spends it over them (see lookAlpha).
const confidenceAlpha = 0.005

// lookAlpha is the one-sided error spent at the k-th look (from 1) of a
// step judged sequentially: α·6/(π²k²). The shares sum to α over any
// number of looks (Σ 1/k² = π²/6), so by the union bound the chance
// that a bound is wrong at any look, and so that the step is decided
// wrongly on it, stays at most α however long the step holds. k = 0 is
// a step judged once, at its end: it spends α at once.
func lookAlpha(k int) float64 {
	if k <= 0 {
		return confidenceAlpha
	}
	return confidenceAlpha * 6 / (math.Pi * math.Pi * float64(k) * float64(k))
}

// fit is a slope of y over x with its uncertainty.
type fit struct {
	slope        float64 // Theil–Sen
	se           float64 // its standard error, allowing for correlated noise
	q            float64 // the quantile the bounds use (Student's t, or normal)
	lower, upper float64 // slope ∓ q·se
	n            int
	sigma        float64 // the spread of one point used
}

// fitTrend estimates the slope of y over x (x increasing) and its
// confidence bounds.
//
// The slope is Theil–Sen's: the median of the slopes between all pairs
// of points. It ignores a spike that recovers (up to about 29 % of the
// points), so that a merge or GC pause is not taken for a trend.
//
// Its standard error is that of least squares, σ/√Sxx with
// Sxx = Σ(x−x̄)², times 1.05 (Theil–Sen is about 91 % as efficient under
// normal noise), where σ is the spread of the residuals (their root mean
// square, each clipped at three robust standard deviations), or minSigma
// when that is
// larger: a resolution known in advance. Neighbouring intervals of a series are
// not independent (a queue that forms lasts a while; a sawtooth ramps),
// so for a correlated series of ten points or more the error is scaled
// by √((1+ρ)/(1−ρ)), ρ being the lag-1
// autocorrelation of the residuals (the usual AR(1) correction of a
// trend's error; ρ, corrected for its bias, is clipped to [0, 0.95]).
// The bounds are slope ∓ q·se with q the 99.5 % quantile of Student's t
// for n(1−ρ)/(1+ρ) − 2 degrees of freedom, but at least (n−2)/2: with
// fewer, the bound of a 20 s step swung to 50 ms/s on a flat series whose
// ρ was overestimated. Or q is the quantile of the normal distribution
// when minSigma dominates six points or more (the spread is then known,
// not estimated).
//
// A hold h long gives n ∝ h points and Sxx ∝ h³, so se ∝ h^−1.5: a trend
// that is real shows ever more clearly as the hold grows, and a flat one
// ever more narrowly bounded. That is what makes a rule on the bounds
// independent of the hold, where a rule on the rise over the hold (the
// slope times h) is not.
//
// alpha is the one-sided error of the bounds (confidenceAlpha, or less
// at a later look of a sequential step).
func fitTrend(x, y []float64, minSigma float64, correlated bool, alpha float64) fit {
	n := len(x)
	f := fit{n: n, q: math.Inf(1), se: math.Inf(1)}
	// Three points are the fewest whose residuals say anything.
	if n < 3 {
		f.lower, f.upper = math.Inf(-1), math.Inf(1)
		return f
	}
	f.slope = theilSen(x, y)
	sxx := sumSquaredDeviations(x)
	res := centeredResiduals(x, y, f.slope)
	sigma := clippedSigma(res)
	// The resolution is trusted as the spread only where enough points
	// show that the spread is no larger: with fewer than six, Student's t
	// applies whatever the resolution says.
	known := minSigma >= sigma && n >= 6
	sigma = max(sigma, minSigma)
	rho := 0.0
	// Below ten points the autocorrelation cannot be told from chance.
	if correlated && n >= 10 && sigma > 0 {
		rho = lagOneCorrelation(res, sigma)
	}
	inflate := math.Sqrt((1 + rho) / (1 - rho))
	if sxx > 0 {
		f.se = 1.05 * sigma / math.Sqrt(sxx) * inflate
	} else {
		f.se = math.Inf(1)
	}
	df := max(float64(n)*(1-rho)/(1+rho)-2, float64(n-2)/2)
	switch {
	case known:
		f.q = normalQuantile(alpha)
	default:
		f.q = tQuantile(alpha, max(df, 1))
	}
	f.lower, f.upper = f.slope-f.q*f.se, f.slope+f.q*f.se
	f.sigma = sigma
	return f
}

// sumSquaredDeviations is Sxx, the sum of the squared deviations of x
// from its mean.
func sumSquaredDeviations(x []float64) float64 {
	var mx float64
	for _, v := range x {
		mx += v
	}
	mx /= float64(len(x))
	var sxx float64
	for _, v := range x {
		sxx += (v - mx) * (v - mx)
	}
	return sxx
}

// centeredResiduals are the residuals of y from the slope, less their
// median.
func centeredResiduals(x, y []float64, slope float64) []float64 {
	res := make([]float64, len(x))
	for i := range x {
		res[i] = y[i] - slope*x[i]
	}
	m := median(res)
	for i := range res {
		res[i] -= m
	}
	return res
}

// clippedSigma is the root mean square of the residuals clipped at three
// robust standard deviations (1.4826 × their median absolute deviation):
// as efficient as a standard deviation under normal noise, yet a spike
// counts no more than 3σ. n/(n−2): two parameters were fitted to the
// residuals. 0 for two points or fewer.
func clippedSigma(res []float64) float64 {
	n := len(res)
	if n <= 2 {
		return 0
	}
	dev := make([]float64, n)
	for i, r := range res {
		dev[i] = math.Abs(r)
	}
	clip := 3 * 1.4826 * median(dev)
	var ss float64
	for _, r := range res {
		r = math.Max(-clip, math.Min(clip, r))
		ss += r * r
	}
	return math.Sqrt(ss / float64(n-2))
}

// lagOneCorrelation is the residuals' lag-one autocorrelation, from the
// residuals clipped at 3σ so that one spike does not pass for
// correlation, corrected for its bias and kept within [0, 0.95].
func lagOneCorrelation(res []float64, sigma float64) float64 {
	var num, den float64
	for i := range res {
		r := math.Max(-3*sigma, math.Min(3*sigma, res[i]))
		den += r * r
		if i > 0 {
			num += r * math.Max(-3*sigma, math.Min(3*sigma, res[i-1]))
		}
	}
	if den <= 0 {
		return 0
	}
	// The estimate is biased low by about (1+4ρ)/n (Kendall), more so for
	// residuals of a fitted line; corrected here.
	r := num / den
	return math.Max(0, math.Min(0.95, r+(1+4*max(r, 0))/float64(len(res))))
}

// normalQuantile is z with P(Z > z) = alpha.
func normalQuantile(alpha float64) float64 {
	return math.Sqrt2 * math.Erfinv(1-2*alpha)
}

// tQuantile is t with P(T > t) = alpha for Student's t with df degrees
// of freedom (df ≥ 1, not necessarily whole), found by bisection on its
// tail, P(T > t) = ½·I_{df/(df+t²)}(df/2, ½).
func tQuantile(alpha, df float64) float64 {
	tail := func(t float64) float64 { return 0.5 * incBeta(df/2, 0.5, df/(df+t*t)) }
	lo, hi := 0.0, normalQuantile(alpha)
	for tail(hi) > alpha {
		lo, hi = hi, 2*hi
	}
	for range 100 {
		mid := (lo + hi) / 2
		if tail(mid) > alpha {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-9*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// incBeta is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (Lentz's method), as in Numerical Recipes' betai.
func incBeta(a, b, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log(1-x))
	if x > (a+1)/(a+b+2) {
		return 1 - front*betaCF(b, a, 1-x)/b
	}
	return front * betaCF(a, b, x) / a
}

func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		for i := range 2 {
			if i == 1 {
				num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
			}
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			h *= d * c
		}
		if math.Abs(d*c-1) < 1e-14 {
			break
		}
	}
	return h
}

// maxPairs bounds the pairs theilSen looks at: all of them up to about
// 450 points (a 7.5-minute step), a fixed sample of them beyond, whose
// median differs from the full one by well under its standard error.
const maxPairs = 100_000

// theilSen is the median of the slopes between all pairs of points.
func theilSen(x, y []float64) float64 {
	n := len(x)
	if n*(n-1)/2 > maxPairs {
		// A fixed seed: the same series always gives the same slope.
		rng := rand.New(rand.NewPCG(1, 2))
		slopes := make([]float64, 0, maxPairs)
		for len(slopes) < maxPairs {
			i, j := rng.IntN(n), rng.IntN(n)
			if dx := x[j] - x[i]; dx != 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
			}
		}
		return median(slopes)
	}
	slopes := make([]float64, 0, n*(n-1)/2)
	for i := range x {
		for j := i + 1; j < n; j++ {
			if dx := x[j] - x[i]; dx != 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
			}
		}
	}
	if len(slopes) == 0 {
		return 0
	}
	return median(slopes)
}

// median is the middle value of v (the mean of the two middle ones for
// an even count) in the order of slices.Sort, NaN first. It selects
// rather than sorts: sorting theilSen's up to maxPairs slopes was most of
// a trend judgement's time.
func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	n := len(s)
	upper := selectNth(s, n/2)
	if n%2 == 1 {
		return upper
	}
	// selectNth left the n/2 smallest values before upper.
	return (slices.MaxFunc(s[:n/2], cmp.Compare[float64]) + upper) / 2
}

// selectNth reorders s so that s[k] holds the value slices.Sort would put
// there, no greater value before it and no smaller one after, and returns
// it: a quickselect with a three-way partition, so that many equal values
// (a flat series' slopes) cost no more than distinct ones.
func selectNth(s []float64, k int) float64 {
	lo, hi := 0, len(s)
	for hi-lo > 1 {
		p := medianOfThree(s[lo], s[lo+(hi-lo)/2], s[hi-1])
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch c := cmp.Compare(s[i], p); {
			case c < 0:
				s[lt], s[i] = s[i], s[lt]
				lt++
				i++
			case c > 0:
				gt--
				s[i], s[gt] = s[gt], s[i]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return s[k]
		}
	}
	return s[k]
}

func medianOfThree(a, b, c float64) float64 {
	if cmp.Less(b, a) {
		a, b = b, a
	}
	if cmp.Less(c, b) {
		b = c
		if cmp.Less(b, a) {
			b = a
		}
	}
	return b
}

// sawtooth is what the lag series says about a visibility period (a
// refresh or flush interval). Between two refreshes no new event becomes
// visible, so the lag ages by one second per second; at a refresh it
// drops to its floor, the delay with which the refresh found the newest
// events. A backlog shows as floors that rise; the ramps between them
// rise by a second per second whatever the backlog, which is why a slope
// fitted through them measures the refresh, not the database.
type sawtooth struct {
	ramps   bool      // the lag ages between drops: a sawtooth, not noise
	drops   []int     // indices of the intervals in which the lag dropped
	floorT  []float64 // time and lowest lag of each of those intervals
	floorMs []float64
	periodS float64 // seconds between refreshes: the drops' spacing, or with one drop its depth
}

// findSawtooth looks for refresh drops in a lag series: t the interval
// starts (s), hi and lo the largest and smallest lag of each interval
// (ms), width the interval width (s). An interval where the smallest lag
// fell below the previous interval's smallest by more than half an
// interval holds a refresh. The series is a sawtooth when, between
// drops, the smallest lag rises from one interval to the next at least
// nine times in ten, by half an interval or more on average: it ages.
func findSawtooth(t, hi, lo []float64, width float64) sawtooth {
	var s sawtooth
	if len(t) < 4 {
		return s
	}
	w := 1000 * width
	diffs := make([]float64, len(lo)-1)
	for i := 1; i < len(lo); i++ {
		diffs[i-1] = lo[i] - lo[i-1]
	}
	var rises, sum float64
	for i, d := range diffs {
		if d < -w/2 {
			s.drops = append(s.drops, i+1)
			continue
		}
		sum += d
		if d > 0 {
			rises++
		}
	}
	// Noise alone, however wide, rises as often as it falls.
	ageing := float64(len(diffs) - len(s.drops))
	s.ramps = ageing > 0 && rises >= 0.9*ageing && sum/ageing >= w/2
	if !s.ramps {
		s.drops = nil
		return s
	}
	for _, i := range s.drops {
		s.floorT = append(s.floorT, t[i])
		s.floorMs = append(s.floorMs, lo[i])
	}
	switch k := len(s.drops); {
	case k >= 2:
		s.periodS = (t[s.drops[k-1]] - t[s.drops[0]]) / float64(k-1)
	case k == 1:
		// The lag just before the refresh is the age of the view that the
		// refresh replaced: about one period more than the floor.
		i := s.drops[0]
		s.periodS = (max(hi[i], hi[i-1]) - lo[i]) / 1000
	}
	return s
}

// periodsNeeded is the number of refreshes whose floors bound a trend
// within ±tol (ms/s) at the rule's confidence, given the spread sigma (ms)
// of one floor and the period (s): the floors' slope has a standard error
// of 1.05·σ / (P·√(K(K²−1)/12)), and a flat series passes reliably when
// the bound is within half the tolerance. The bound is taken with
// Student's t for K−2 degrees of freedom, as if the spread had to be
// estimated from the floors themselves: it is larger than the poll
// resolution often enough (refreshes that take longer some times than
// others) that a hold named on the resolution alone would fall short.
//
// alpha is the bound's error at the look that will judge them.
func periodsNeeded(sigma, periodS, tol, alpha float64) int {
	for k := 3; k < 1000; k++ {
		kk := float64(k)
		se := 1.05 * sigma / (periodS * math.Sqrt(kk*(kk*kk-1)/12))
		if tQuantile(alpha, kk-2)*se <= tol/2 {
			return k
		}
	}
	return 1000
}
