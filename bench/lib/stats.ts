/** Statistics of a bench's measurements: percentiles of a sample, the median of the runs. */

export interface Percentiles {
  min: number;
  p50: number;
  p99: number;
  max: number;
}

/** The value at or above which a share `1 - p` of `values` lies (nearest rank); NaN when empty. */
export function percentile(values: number[], p: number): number {
  return nearestRank(Float64Array.from(values).sort(), p);
}

export function percentiles(values: number[]): Percentiles {
  const sorted = Float64Array.from(values).sort();
  return {
    min: sorted[0] ?? NaN,
    p50: nearestRank(sorted, 0.5),
    p99: nearestRank(sorted, 0.99),
    max: nearestRank(sorted, 1),
  };
}

function nearestRank(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? NaN;
}

/** The (lower) median: of an even count, the smaller of the two middle values; NaN when empty. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
}
