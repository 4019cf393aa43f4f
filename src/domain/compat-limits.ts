/**
 * The limits of the provider-compatible batch endpoints: the providers' own (providers.md §1.7,
 * §3.1), which a deployment may lower (BARGE_COMPAT_*), never raise. Tests lower them so that a
 * body reaching a bound is a few MB, not 256. Pure.
 */
export interface CompatLimits {
  /** Requests in one Message Batch (Anthropic: 100,000). */
  batchRequests: number;
  /** Bytes of a Message Batches create body (Anthropic: 256 MB). */
  batchBytes: number;
  /** Bytes of an uploaded Batch input file (OpenAI: 200 MB). */
  fileBytes: number;
  /** Requests (lines) of a Batch input file (OpenAI: 50,000). */
  fileLines: number;
}

export const PROVIDER_LIMITS: Readonly<CompatLimits> = Object.freeze({
  batchRequests: 100_000,
  batchBytes: 256 * 1024 * 1024,
  fileBytes: 200 * 1024 * 1024,
  fileLines: 50_000,
});
