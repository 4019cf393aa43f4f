import type { BatchRequest } from '../domain/batch-requests.js';
import type { ModelMessage } from '../domain/model-message.js';

export type { BatchRequest };

/**
 * The one interface every batch provider implements, shaped after the real batch APIs
 * (spec/providers.md): Anthropic Message Batches (100,000 requests / 256 MB, 24 h), Bedrock model
 * invocation jobs (a per-model minimum record count, JSONL in S3, 24–168 h) and svc-mock.
 */
export interface ProviderLimits {
  /** Requests per batch job (Anthropic 100,000; Bedrock commonly 50,000). */
  maxRequests: number;
  /** Serialized request bytes per batch job (Anthropic 256 MB). */
  maxBytes: number;
  /** A job with fewer requests is rejected (Bedrock: commonly 100); the batcher pads up to it. */
  minRequests: number;
  /** The provider ends (expires) a job after this long. */
  completionWindowMs: number;
  /** How long the batcher lets a group wait to fill before it flushes it anyway. */
  defaultMaxWaitMs: number;
}

export interface SubmitRequest {
  /** Our batch id. Submitting the same batch id twice must not create two jobs. */
  batchId: string;
  /** The provider's model id; one model per job (Bedrock and OpenAI require it). */
  model: string;
  /** How many requests `requests` yields (padding included). */
  requestCount: number;
  /** The requests in batch order, read from the store as they are consumed: stream them. */
  requests: AsyncIterable<BatchRequest>;
}

export type JobStatus =
  /** Still running; `expectedEndAt` (epoch ms) when the provider can say. */
  | { state: 'running'; expectedEndAt: number | null }
  /** Ended in any way (completed, canceled, expired): results may be collected. */
  | { state: 'ended' }
  /** The job as a whole failed and has no results; `message` is the provider's text. */
  | { state: 'failed'; message: string };

/** How a request failed: the provider rejected or failed it, or it never ran. */
export type FailureKind = 'errored' | 'canceled' | 'expired';

export type RequestResult =
  | { customId: string; success: true; response: ModelMessage }
  | { customId: string; success: false; kind: FailureKind; error: string };

export interface Provider {
  readonly name: string;
  readonly limits: ProviderLimits;
  submit(request: SubmitRequest): Promise<{ jobId: string }>;
  status(jobId: string): Promise<JobStatus>;
  /** Every request's result, in any order (no provider promises input order). */
  results(jobId: string): AsyncIterable<RequestResult>;
  cancel(jobId: string): Promise<void>;
}
