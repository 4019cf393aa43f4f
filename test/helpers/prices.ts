/** Prices the tests compute costs with: Sonnet's, as the shipped catalog gives them (docs/models.md). */

/** Claude Sonnet 4.5's prices a million tokens: cache writes 1.25x and 2x the input price, reads 0.1x; batch half. */
export const SONNET_PRICES = Object.freeze({
  input: 3,
  output: 15,
  batch_input: 1.5,
  batch_output: 7.5,
  cache_write: 3.75,
  cache_write_1h: 6,
  cache_read: 0.3,
  batch_cache_write: 1.875,
  batch_cache_write_1h: 3,
  batch_cache_read: 0.15,
});
