import type { Clock } from '../../domain/clock.js';
import { newId } from '../../domain/ids.js';
import { batchRequests } from '../../store/batches/requests.js';
import type { Database } from '../../store/database.js';
import {
  cancelMockJob,
  deleteMockJobsEndedBefore,
  findMockJob,
  findMockJobState,
  insertMockJob,
} from '../../store/mock-jobs.js';
import type { BatchRequest, JobStatus, Provider, ProviderLimits, RequestResult, SubmitRequest } from '../provider.js';
import { mockRespond } from './responder.js';

const DAY = 86_400_000;
/** Results come back shuffled within windows of this many: out of order, in bounded memory. */
const SHUFFLE_WINDOW = 2000;
/** Long-ended jobs are deleted at most this often: the deletion scans every job row. */
const CLEANUP_EVERY_MS = 3_600_000;

export const MOCK_LIMITS: ProviderLimits = {
  maxRequests: 100_000,
  maxBytes: 256 * 1024 * 1024,
  minRequests: 1,
  completionWindowMs: DAY,
  // svc-mock stands in for a batch API in integration tests: flush quickly.
  defaultMaxWaitMs: 500,
};

export interface MockProviderOptions {
  /** How long a job runs before it ends (BARGE_MOCK_LATENCY_MS). */
  latencyMs: number;
  limits?: Partial<ProviderLimits>;
}

/**
 * The svc-mock provider: a batch API that never bills. Its jobs are rows in the service's own
 * database, so they survive restarts, and its results come out in a shuffled order, as real
 * providers' do.
 */
export class MockProvider implements Provider {
  readonly name = 'mock';
  readonly limits: ProviderLimits;
  /** When submit next deletes long-ended jobs (see CLEANUP_EVERY_MS). */
  private nextCleanupAt = 0;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly options: MockProviderOptions,
  ) {
    this.limits = { ...MOCK_LIMITS, ...options.limits };
  }

  /**
   * Records the job. Its requests are not read here nor kept: `results` replays them from the
   * batch, which the store keeps until the results are in.
   */
  async submit(request: SubmitRequest): Promise<{ jobId: string }> {
    const now = this.clock.now();
    const job = {
      id: newId('job', now),
      batch_id: request.batchId,
      model: request.model,
      request_count: request.requestCount,
      created_at: now,
      ends_at: now + this.options.latencyMs,
      canceled_at: null,
    };
    const jobId = await insertMockJob(this.database, job);
    if (now >= this.nextCleanupAt) {
      this.nextCleanupAt = now + CLEANUP_EVERY_MS;
      await deleteMockJobsEndedBefore(this.database, now - 30 * DAY);
    }
    return { jobId };
  }

  async status(jobId: string): Promise<JobStatus> {
    const job = await findMockJobState(this.database, jobId);
    if (!job) return { state: 'failed', message: `svc-mock: no job ${jobId}` };
    if (job.canceled_at !== null || job.ends_at <= this.clock.now()) return { state: 'ended' };
    return { state: 'running', expectedEndAt: job.ends_at };
  }

  async *results(jobId: string): AsyncIterable<RequestResult> {
    const job = await findMockJob(this.database, jobId);
    if (!job) return;
    const canceledEarly = job.canceled_at !== null && job.canceled_at < job.ends_at;
    let window: BatchRequest[] = [];
    const shuffled = function* (requests: BatchRequest[]) {
      for (const i of shuffledIndexes(requests.length, `${job.id}${requests[0]?.customId}`)) {
        yield requests[i] as BatchRequest;
      }
    };
    for await (const request of batchRequests(this.database, job.batch_id, job.request_count)) {
      window.push(request);
      if (window.length < SHUFFLE_WINDOW) continue;
      for (const r of shuffled(window)) yield this.respond(job.model, r, canceledEarly);
      window = [];
    }
    for (const r of shuffled(window)) yield this.respond(job.model, r, canceledEarly);
  }

  private respond(model: string, request: BatchRequest, canceledEarly: boolean): RequestResult {
    const customId = request.customId;
    if (canceledEarly) {
      return {
        customId,
        success: false,
        kind: 'canceled',
        error: 'canceled: the batch was canceled before this request ran',
      };
    }
    const outcome = mockRespond(model, JSON.parse(request.input) as Parameters<typeof mockRespond>[1]);
    return outcome.success
      ? { customId, success: true, response: outcome.response }
      : { customId, success: false, kind: outcome.kind, error: outcome.error };
  }

  async cancel(jobId: string): Promise<void> {
    await cancelMockJob(this.database, jobId, this.clock.now());
  }
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
