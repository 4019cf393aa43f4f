/**
 * The provider seam: the one interface every batch provider adapter implements (svc-mock,
 * Anthropic Message Batches, OpenAI Batch, Bedrock model invocation jobs; spec/providers.md).
 *
 * Adapters speak their provider's protocol and nothing else: they never touch the store. Whatever
 * an adapter must remember between calls (OpenAI's uploaded input file, svc-mock's end time) it
 * hands back as opaque `state` text, which the pipeline persists on the batch row and hands in
 * again. Failures are `ProviderError`s of a kind; the pipeline maps kinds to retries or to failing
 * the batch in one place (src/pipeline/provider-errors.ts).
 */
import type { BatchRequest } from '../domain/batch-requests.js';
import type { ModelMessage } from '../domain/model-message.js';

export type { BatchRequest };

export interface ProviderLimits {
  /** Requests per batch job (Anthropic 100,000; OpenAI 50,000; Bedrock commonly 50,000). */
  maxRequests: number;
  /** Serialized request bytes per batch job (Anthropic 256 MB, OpenAI 200 MB per input file). */
  maxBytes: number;
  /** A job with fewer requests is rejected (Bedrock: commonly 100); the batcher pads up to it. */
  minRequests: number;
  /** The provider ends (expires) a job after this long. */
  completionWindowMs: number;
  /** How long the batcher lets a group wait to fill before it flushes it anyway. */
  defaultMaxWaitMs: number;
  /**
   * Jobs of this provider barge lets run at once (Bedrock: the account's quota on jobs in progress,
   * BARGE_BEDROCK_MAX_JOBS); a batch past it waits its turn. Absent: no limit.
   */
  maxJobsInProgress?: number;
}

/** One step of submitting a batch. Called again with the returned state until it says `submitted`. */
export interface SubmitInput {
  /** barge's batch id: what an adapter tags the job with when its provider lets it (OpenAI metadata). */
  batchId: string;
  /** The provider's model id; one model per job. */
  model: string;
  /** How many requests `requests` yields (padding included). */
  requestCount: number;
  /** The requests in batch order, read from the store as they are consumed: stream them. */
  requests: AsyncIterable<BatchRequest>;
  /** What the previous step of this submission returned as `state`; null on the first step. */
  state: string | null;
  /** Aborts the step's calls (the call deadline, src/providers/call-deadline.ts). */
  signal?: AbortSignal;
}

export type SubmitStep =
  /** The provider accepted the job. */
  | { kind: 'submitted'; jobId: string; state: string | null }
  /** A step short of the job (OpenAI: the input file is uploaded); persisted before the next. */
  | { kind: 'progress'; state: string };

/** A job as the pipeline recorded it. */
export interface JobRef {
  batchId: string;
  jobId: string;
  model: string;
  /** Requests in the job, padding included. */
  requestCount: number;
  submittedAt: number;
  /** When barge asked the provider to cancel the job, if it did. */
  canceledAt: number | null;
  /** The adapter's state as of the submission. */
  state: string | null;
  /** The job's requests again, in batch order (svc-mock replays them; real providers never need them). */
  requests(): AsyncIterable<BatchRequest>;
  /** The custom ids of `requests()`, in the same order, without reading the requests' text (Bedrock's record ids are positions). */
  customIds(): AsyncIterable<string>;
}

/** What a provider knows of a batch whose create call may have been accepted but not recorded. */
export interface SubmissionLookup {
  batchId: string;
  requestCount: number;
  /** The submission was started (its intent recorded) at this time; the job cannot be older. */
  startedAt: number;
  /** Nothing created after this can be the lost job (the lease it was created under had lapsed). */
  until: number;
  /** What the submission's last persisted step returned (Bedrock: where the job was to run). */
  state: string | null;
}

/** A job at the provider that may be the one a lost create call made. */
export interface FoundJob {
  jobId: string;
  state: string | null;
  /**
   * `exact` when the provider tagged the job with barge's batch id (OpenAI metadata, Bedrock's
   * client request token); `candidate` when it only matches by model, size and creation time
   * (Anthropic, which has neither).
   */
  match: 'exact' | 'candidate';
}

export type JobStatus =
  /** Still running; `expectedEndAt` (epoch ms) when the provider can say. */
  | { state: 'running'; expectedEndAt: number | null }
  /**
   * Ended in any way (completed, canceled, expired, partly failed): results may be collected.
   * `unanswered`: what a request the results leave out becomes, where how the job ended says
   * (Bedrock: it ran out of time, `expired`, or was stopped, `canceled`); absent, it fails as missing.
   */
  | { state: 'ended'; unanswered?: 'expired' | 'canceled' }
  /** The job as a whole failed and has no results; `message` is the provider's text. */
  | { state: 'failed'; message: string };

/** How a request failed: the provider rejected or failed it, or it never ran. */
export type FailureKind = 'errored' | 'canceled' | 'expired';

export type RequestResult =
  | { customId: string; success: true; response: ModelMessage }
  | { customId: string; success: false; kind: FailureKind; error: string };

/**
 * Every call but `check` takes an optional `signal` (the call deadline, call-deadline.ts), which
 * an adapter hands to each request it makes for the call.
 */
export interface Provider {
  readonly name: string;
  readonly limits: ProviderLimits;
  /** One step of submitting; see SubmitStep. A retried step may repeat work, never duplicate a job it can see. */
  submit(input: SubmitInput): Promise<SubmitStep>;
  /**
   * The jobs a submission whose answer was lost may have created (a process killed while the
   * create call was open). The pipeline adopts one that no other batch recorded and cancels the
   * rest, so no job runs unwatched and none runs twice.
   */
  findSubmitted(lookup: SubmissionLookup, signal?: AbortSignal): Promise<FoundJob[]>;
  status(job: JobRef, signal?: AbortSignal): Promise<JobStatus>;
  /** Every request's result, in any order (no provider promises input order). Streamed. */
  results(job: JobRef, signal?: AbortSignal): AsyncIterable<RequestResult>;
  cancel(job: JobRef, signal?: AbortSignal): Promise<void>;
  /** Removes what the ended job left at the provider (OpenAI: the input file); best effort. */
  cleanup(job: JobRef, signal?: AbortSignal): Promise<void>;
  /**
   * A read-only check that the credentials work (`barge provider check <name>`): each capability
   * the adapter needs, tried with the cheapest call that proves it (a list with limit 1). Never
   * throws: a failure is a capability with `ok: false` and the provider's text.
   */
  check(): Promise<ProviderCapability[]>;
}

/** One capability a provider check tried: `name` such as `list batches`, `detail` what it saw. */
export interface ProviderCapability {
  name: string;
  ok: boolean;
  detail: string;
}

/**
 * How long one call of a provider check may take. The SDKs wait up to 10 minutes by default,
 * which suits a results download but not a person waiting at a terminal for a list of one item.
 */
export const CHECK_TIMEOUT_MS = 30_000;

/**
 * The SDKs' own timeout on a request, set out of the way: every pipeline call is bounded by the
 * call deadline instead, by progress (an SDK timeout counts from the start, and would cut a large
 * upload off while it moves). The longest a Node timer takes.
 */
export const SDK_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * One capability of a check: `probe`'s answer is the detail when it works; what it throws, as
 * `toError`'s ProviderError (the adapter's own mapping, which keeps the key out), when it fails.
 */
export async function checkCapability(
  name: string,
  probe: () => Promise<string>,
  toError: (err: unknown) => ProviderError,
): Promise<ProviderCapability> {
  try {
    return { name, ok: true, detail: await probe() };
  } catch (err) {
    return { name, ok: false, detail: toError(err).message };
  }
}

/**
 * How a provider call failed, as the pipeline acts on it:
 * - `retryable`: a network failure, 5xx, 529, or a job not yet visible (404 just after create):
 *   retried with backoff.
 * - `rate_limited`: 429; retried after `retryAfterMs` when the provider said, else with backoff.
 * - `rejected`: the provider refused the request (400, 404, 413): retrying it as is will not help.
 * - `auth`: the credentials do not work (401, 403): the operator must act.
 * `rejected` and `auth` fail the batch after a bounded number of tries, with the provider's text.
 */
export type ProviderErrorKind = 'retryable' | 'rate_limited' | 'rejected' | 'auth';

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/**
 * A job this young that the provider says it does not know is not gone: the provider does not show
 * it yet (a 404 has been seen a second after create, field-notes.md), so the call is retried.
 */
export const JUST_CREATED_MS = 5 * 60_000;

/** Whether `job` was created so recently that a 404 for it means "not visible yet". */
export function justCreated(job: JobRef | null, now: number): boolean {
  return job !== null && now - job.submittedAt < JUST_CREATED_MS;
}

/**
 * The kind of an HTTP status a provider answered, for adapters that map their SDK's errors: no
 * status (no answer) is `retryable`, and so is a 404 for a job just created (`justCreated`).
 */
export function errorKindOfStatus(status: number | undefined, jobJustCreated = false): ProviderErrorKind {
  if (status === undefined) return 'retryable';
  if (status === 404 && jobJustCreated) return 'retryable';
  if (status === 429) return 'rate_limited';
  if (status === 401 || status === 403) return 'auth';
  if (status === 408 || status === 409 || status >= 500) return 'retryable';
  return 'rejected';
}

/** Runs one provider call, what it throws turned into `toError`'s ProviderError (the adapter's mapping). */
export async function providerCall<T>(run: () => Promise<T>, toError: (err: unknown) => ProviderError): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw toError(err);
  }
}

/**
 * The items of a provider's stream (a results download), with what reading it throws turned into
 * `toError`'s ProviderError; a consumer that stops early closes the stream (and its connection).
 */
export async function* providerStream<T>(
  source: AsyncIterable<T>,
  toError: (err: unknown) => ProviderError,
): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<T>;
      try {
        next = await iterator.next();
      } catch (err) {
        throw toError(err);
      }
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await iterator.return?.();
  }
}

/**
 * Sends `source` (a file produced as it is read) through `upload`, so that what the source itself
 * threw (a store read, a size cap) is the error rather than the broken upload it causes, and so the
 * source is closed when the provider answered before reading it all.
 */
export async function uploadFrom<C, T>(
  source: AsyncIterable<C>,
  upload: (body: AsyncGenerator<C>) => Promise<T>,
  toError: (err: unknown) => ProviderError,
): Promise<T> {
  let sourceError: unknown;
  const watched = (async function* () {
    try {
      yield* source;
    } catch (err) {
      sourceError = err;
      throw err;
    }
  })();
  try {
    return await upload(watched);
  } catch (err) {
    throw sourceError ?? toError(err);
  } finally {
    // Closing the wrapper closes the source (`yield*` passes the return on): no store read stays open.
    await watched.return(undefined).catch(() => {});
  }
}

/** `text` without the API key, in case a proxy or a library echoes it into a message. */
export function withoutKey(text: string, apiKey: string): string {
  return apiKey.length > 0 ? text.split(apiKey).join('[redacted]') : text;
}

/** Milliseconds to wait from a `retry-after-ms` or `retry-after` header (seconds or an HTTP date). */
export function retryAfterMsOf(headers: { get(name: string): string | null } | undefined, now: number): number | null {
  if (!headers) return null;
  const ms = Number(headers.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const value = headers.get('retry-after');
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
