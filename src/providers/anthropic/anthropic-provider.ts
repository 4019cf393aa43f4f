/** The Anthropic Message Batches provider (providers.md §1) over the official `@anthropic-ai/sdk`. */
import Anthropic from '@anthropic-ai/sdk';
import type { MessageBatch } from '@anthropic-ai/sdk/resources/messages/batches';
import { type Clock, DAY_MS } from '../../domain/clock.js';
import {
  CHECK_TIMEOUT_MS,
  checkCapability,
  type FoundJob,
  type JobRef,
  type JobStatus,
  justCreated,
  type Provider,
  type ProviderCapability,
  ProviderError,
  type ProviderLimits,
  providerCall,
  providerStream,
  type RequestResult,
  SDK_TIMEOUT_MS,
  type SubmissionLookup,
  type SubmitInput,
  type SubmitStep,
  uploadFrom,
} from '../provider.js';
import { providerErrorOf } from './provider-errors.js';
import { createBodyChunks } from './request-body.js';
import { requestResultOf } from './result-mapping.js';
import { findCandidates, LIST_PAGE_SIZE } from './submission-lookup.js';

/** The API refuses a create body above 256 MB with a 413 (providers.md §1.7). */
const MAX_BODY_BYTES = 256 * 1024 * 1024;
const MAX_REQUESTS = 100_000;
/**
 * What the create body adds to each stored input: `{"custom_id":"<≤64>","params":{"model":"<id>",`,
 * `}` and a comma. The batcher packs by stored request bytes, so the limit it is given leaves this
 * room for a full batch (100,000 × 256 bytes ≈ 24 MB) below the API's 256 MB.
 */
const ENVELOPE_BYTES_PER_REQUEST = 256;

const ANTHROPIC_LIMITS: ProviderLimits = {
  maxRequests: MAX_REQUESTS,
  maxBytes: MAX_BODY_BYTES - MAX_REQUESTS * ENVELOPE_BYTES_PER_REQUEST,
  minRequests: 1,
  completionWindowMs: DAY_MS,
  // A Message Batch takes minutes to an hour to run, so a minute spent filling it adds little to a
  // cargo's wait, while it makes fewer, larger batches: fewer creates and polls against the batch
  // API's per-minute limit (which counts every batch endpoint) and fewer jobs to watch.
  defaultMaxWaitMs: 60_000,
};

export interface AnthropicProviderOptions {
  /** ANTHROPIC_API_KEY; sent by the SDK as `Authorization: Bearer`. */
  apiKey: string;
  /** ANTHROPIC_BASE_URL, without `/v1` (the SDK's paths start with it). */
  baseUrl: string;
  /**
   * The `anthropic-version` header on every call: BARGE_ANTHROPIC_VERSION, which config.ts pins to
   * 2023-06-01 whatever the SDK's default (2026-10-21 in SDK 1.x; decisions.md).
   */
  version: string;
  clock: Clock;
  limits?: Partial<ProviderLimits>;
  /** Batches per list page when looking for a lost create (tests lower it to see paging). */
  listPageSize?: number;
}

/**
 * Submits a batch as one Message Batch, polls it, streams its results file and cancels it. The SDK
 * never retries (`maxRetries: 0`): the pipeline owns retries and backoff, and an SDK retry of a create
 * whose answer was lost would make a second billed batch, since the API honours no idempotency key.
 */
export class AnthropicProvider implements Provider {
  readonly name = 'anthropic';
  readonly limits: ProviderLimits;
  private readonly client: Anthropic;
  private readonly apiKey: string;
  private readonly clock: Clock;
  private readonly listPageSize: number;

  constructor(options: AnthropicProviderOptions) {
    this.apiKey = options.apiKey;
    this.clock = options.clock;
    this.limits = { ...ANTHROPIC_LIMITS, ...options.limits };
    this.listPageSize = options.listPageSize ?? LIST_PAGE_SIZE;
    this.client = new Anthropic({
      apiKey: options.apiKey,
      baseURL: options.baseUrl,
      maxRetries: 0,
      timeout: SDK_TIMEOUT_MS,
      // Default headers are applied after the SDK's own, so this replaces its version.
      defaultHeaders: { 'anthropic-version': options.version },
    });
  }

  /**
   * One create call, whose body is assembled as text from the requests as the store yields them
   * (request-body.ts) and sent as a chunked stream: `batches.create` would take a list of parsed
   * request objects and serialise it again, and a body built whole first is up to 256 MB held at
   * once. What the body's producer throws (a store read, a limit) is the error, not the broken upload.
   */
  async submit(input: SubmitInput): Promise<SubmitStep> {
    const limits = { maxRequests: this.limits.maxRequests, maxBodyBytes: MAX_BODY_BYTES };
    const batch = await uploadFrom(
      createBodyChunks(input.model, input.requests, limits),
      (body) =>
        this.client.post<MessageBatch>('/v1/messages/batches', {
          body,
          headers: { 'content-type': 'application/json' },
          signal: input.signal,
        }),
      (err) => providerErrorOf(err, this.errorContext(null)),
    );
    return { kind: 'submitted', jobId: batch.id, state: null };
  }

  findSubmitted(lookup: SubmissionLookup, signal?: AbortSignal): Promise<FoundJob[]> {
    return this.call(null, () => findCandidates(this.client, lookup, this.listPageSize, signal));
  }

  /**
   * `in_progress` and `canceling` are running; `ended` covers completed, canceled and expired batches
   * alike (each request's outcome is in the results). The API ends a batch itself at `expires_at`.
   * No expected end is given: `expires_at` is only the 24-hour bound (most batches end within the
   * hour), and polling would wait for it.
   */
  async status(job: JobRef, signal?: AbortSignal): Promise<JobStatus> {
    const batch = await this.call(job, () => this.client.messages.batches.retrieve(job.jobId, {}, { signal }));
    if (batch.processing_status === 'ended') return { state: 'ended' };
    return { state: 'running', expectedEndAt: null };
  }

  /**
   * The SDK retrieves the batch and GETs its `results_url` (the API asks clients not to build that
   * path), returning a JSONL decoder over the streamed body: lines are parsed and yielded as bytes
   * arrive, so a 100,000-line file is never held whole.
   */
  async *results(job: JobRef, signal?: AbortSignal): AsyncIterable<RequestResult> {
    const lines = await this.call(job, () => this.client.messages.batches.results(job.jobId, {}, { signal }));
    for await (const line of providerStream(lines, (err) => providerErrorOf(err, this.errorContext(job)))) {
      yield requestResultOf(line);
    }
  }

  /**
   * Asks the API to cancel. A refusal because the batch is no longer in progress (it ended, or is
   * already canceling) is what was wanted, so it is not an error.
   */
  async cancel(job: JobRef, signal?: AbortSignal): Promise<void> {
    try {
      await this.call(job, () => this.client.messages.batches.cancel(job.jobId, {}, { signal }));
    } catch (err) {
      if (!(err instanceof ProviderError) || err.kind !== 'rejected') throw err;
      const batch = await this.call(job, () => this.client.messages.batches.retrieve(job.jobId, {}, { signal }));
      if (batch.processing_status === 'in_progress') throw err;
    }
  }

  /** Nothing to remove: results stay downloadable for 29 days and go by themselves; they are not deleted. */
  async cleanup(_job: JobRef): Promise<void> {}

  /**
   * Lists one Message Batch: the cheapest read that proves the key and the base URL (every batch
   * endpoint takes the same key, and a list changes nothing and bills nothing).
   */
  async check(): Promise<ProviderCapability[]> {
    return [
      await checkCapability(
        'list message batches',
        async () => {
          const page = await this.client.messages.batches.list({ limit: 1 }, { timeout: CHECK_TIMEOUT_MS });
          return `listed message batches (${page.data.length} seen)`;
        },
        (err) => providerErrorOf(err, this.errorContext(null)),
      ),
    ];
  }

  /** Runs one SDK call, its failures as ProviderErrors. */
  private call<T>(job: JobRef | null, run: () => Promise<T>): Promise<T> {
    return providerCall(run, (err) => providerErrorOf(err, this.errorContext(job)));
  }

  private errorContext(job: JobRef | null) {
    const now = this.clock.now();
    return { now, jobJustCreated: justCreated(job, now), apiKey: this.apiKey };
  }
}
