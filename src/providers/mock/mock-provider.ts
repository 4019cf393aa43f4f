/** The svc-mock provider: a batch API that never bills, for integration tests and demos. */
import { type Clock, DAY_MS } from '../../domain/clock.js';
import { newId } from '../../domain/ids.js';
import { CANCELED_ERROR } from '../../domain/records.js';
import type {
  BatchRequest,
  FoundJob,
  JobRef,
  JobStatus,
  Provider,
  ProviderCapability,
  ProviderLimits,
  RequestResult,
  SubmissionLookup,
  SubmitInput,
  SubmitStep,
} from '../provider.js';
import { type CachedPrefixes, mockRespond } from './responder.js';

/** Results come back shuffled within windows of this many: out of order, in bounded memory. */
const SHUFFLE_WINDOW = 2000;

const MOCK_LIMITS: ProviderLimits = {
  maxRequests: 100_000,
  maxBytes: 256 * 1024 * 1024,
  minRequests: 1,
  completionWindowMs: DAY_MS,
  // svc-mock stands in for a batch API in integration tests: flush quickly.
  defaultMaxWaitMs: 500,
};

export interface MockProviderOptions {
  /** How long a job runs before it ends (BARGE_MOCK_LATENCY_MS). */
  latencyMs: number;
  limits?: Partial<ProviderLimits>;
}

/** What a svc-mock job is: its end time, kept by the pipeline as the job's state. */
interface MockJobState {
  endsAt: number;
}

/**
 * svc-mock keeps nothing of its own: a job is its end time (the state the pipeline persists on the
 * batch), a cancel is the batch's `canceled_at`, and `results` replays the batch's requests through
 * the deterministic responder, shuffled as real providers' results are.
 */
export class MockProvider implements Provider {
  readonly name = 'mock';
  readonly limits: ProviderLimits;

  constructor(
    private readonly clock: Clock,
    private readonly options: MockProviderOptions,
  ) {
    this.limits = { ...MOCK_LIMITS, ...options.limits };
  }

  async submit(_input: SubmitInput): Promise<SubmitStep> {
    const now = this.clock.now();
    const state: MockJobState = { endsAt: now + this.options.latencyMs };
    return { kind: 'submitted', jobId: newId('job', now), state: JSON.stringify(state) };
  }

  /** A lost svc-mock submission created nothing anywhere: there is nothing to find. */
  async findSubmitted(_lookup: SubmissionLookup): Promise<FoundJob[]> {
    return [];
  }

  async status(job: JobRef): Promise<JobStatus> {
    const { endsAt } = stateOf(job);
    if (job.canceledAt !== null || endsAt <= this.clock.now()) return { state: 'ended' };
    return { state: 'running', expectedEndAt: endsAt };
  }

  /**
   * The requests are answered in a shuffled order (a window at a time), as they come back: the
   * first answer with a cached prefix writes it, the others read it. The shuffle is seeded by the
   * job, so every reading of a job answers alike. A window holds requests, not answers: an answer is
   * made as it is handed over, and no window of them outlives the young generation.
   */
  async *results(job: JobRef): AsyncIterable<RequestResult> {
    const { endsAt } = stateOf(job);
    const canceledEarly = job.canceledAt !== null && job.canceledAt < endsAt;
    const cached: CachedPrefixes = new Set();
    let window: BatchRequest[] = [];
    const shuffled = function* (requests: BatchRequest[]) {
      for (const i of shuffledIndexes(requests.length, `${job.jobId}${requests[0]?.customId}`)) {
        yield requests[i] as BatchRequest;
      }
    };
    for await (const request of job.requests()) {
      window.push(request);
      if (window.length < SHUFFLE_WINDOW) continue;
      for (const r of shuffled(window)) yield this.respond(job.model, r, canceledEarly, cached);
      window = [];
    }
    for (const r of shuffled(window)) yield this.respond(job.model, r, canceledEarly, cached);
  }

  private respond(model: string, request: BatchRequest, canceledEarly: boolean, cached: CachedPrefixes): RequestResult {
    const customId = request.customId;
    if (canceledEarly) {
      return {
        customId,
        success: false,
        kind: 'canceled',
        error: CANCELED_ERROR,
      };
    }
    const outcome = mockRespond(model, request.input, cached);
    return outcome.success
      ? { customId, success: true, response: outcome.response }
      : { customId, success: false, kind: outcome.kind, error: outcome.error };
  }

  /** The pipeline records the cancel on the batch (`canceledAt`), which is all a svc-mock job needs. */
  async cancel(_job: JobRef): Promise<void> {}

  async cleanup(): Promise<void> {}

  /** svc-mock runs in this process: there is nothing to reach and no key to try. */
  async check(): Promise<ProviderCapability[]> {
    return [{ name: 'credentials', ok: true, detail: 'svc-mock runs inside barge and needs no credentials' }];
  }
}

function stateOf(job: JobRef): MockJobState {
  return job.state ? (JSON.parse(job.state) as MockJobState) : { endsAt: job.submittedAt };
}

/** A permutation of 0..n-1 fixed by the seed (results never come back in input order). */
function shuffledIndexes(n: number, seed: string): number[] {
  let state = 0;
  for (const ch of seed) state = (Math.imul(state, 31) + ch.charCodeAt(0)) | 0;
  const next = () => {
    // mulberry32
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  return order;
}
