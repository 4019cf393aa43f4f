/**
 * The `openai-compatible` provider: a batch run by barge itself against a self-hosted
 * OpenAI-compatible `/chat/completions` endpoint that has no batch API (decisions.md, "Batches over
 * a real-time endpoint"). Submitting a batch stores its requests as rows (the job is the batch
 * itself); the endpoint runner (runner.ts) sends them under leases; the batch has ended when none
 * is queued, and its results are the stored answers. Everything goes through the RealtimeQueue
 * port: the adapter writes no SQL.
 */
import { type Clock, DAY_MS } from '../../domain/clock.js';
import { splitEndpointModel } from '../../domain/model-catalog.js';
import type { RealtimeQueue } from '../../domain/realtime-requests.js';
import { CANCELED_ERROR } from '../../domain/records.js';
import type {
  FoundJob,
  JobRef,
  JobStatus,
  Provider,
  ProviderCapability,
  ProviderLimits,
  RequestResult,
  SubmitInput,
  SubmitStep,
} from '../provider.js';
import { checkEndpoint } from './check-endpoint.js';
import type { Endpoint } from './send-request.js';

/** A request is tried until this long after its batch was submitted (decisions.md: 24 h). */
export const REALTIME_WINDOW_MS = DAY_MS;
/** The poller cancels a job past its window; the requests' own deadline comes first, with room to settle. */
const COMPLETION_WINDOW_MS = REALTIME_WINDOW_MS + 3_600_000;
/** While requests run, the batch is looked at this often at least (a count of its queued rows). */
const PROGRESS_CHECK_MS = 1_000;

const REALTIME_LIMITS: ProviderLimits = {
  // Rows, not a file: the bound is BARGE_BATCH_MAX_SIZE's.
  maxRequests: 100_000,
  maxBytes: 1024 ** 3,
  minRequests: 1,
  completionWindowMs: COMPLETION_WINDOW_MS,
  // The requests are sent one by one anyway: a quarter second of gathering keeps batches (and
  // their polls) to a few a second under a stream of cargo, and the runner is never left waiting
  // long for the next batch (bench:realtime --via http).
  defaultMaxWaitMs: 250,
};

export interface RealtimeProviderOptions {
  endpoints: ReadonlyMap<string, Endpoint>;
  /** Null where no database is open (`barge provider check`): only check() may be called. */
  queue: RealtimeQueue | null;
  clock: Clock;
  /** A batch's requests were stored: the runner of that endpoint looks for them. */
  onEnqueued?: (endpoint: string) => void;
  /** The models each endpoint serves (the catalog's routes), for the check. */
  modelsOf?: (endpoint: string) => string[];
}

export class OpenAICompatibleProvider implements Provider {
  readonly name = 'openai-compatible';
  readonly limits = REALTIME_LIMITS;

  constructor(private readonly options: RealtimeProviderOptions) {}

  private get queue(): RealtimeQueue {
    if (!this.options.queue) throw new Error('the openai-compatible provider runs batches only in a worker');
    return this.options.queue;
  }

  /** Stores the requests (the job is the batch itself: its id is barge's batch id). */
  async submit(input: SubmitInput): Promise<SubmitStep> {
    const { endpoint, model } = splitEndpointModel(input.model);
    if (!this.options.endpoints.has(endpoint)) throw new Error(`endpoint '${endpoint}' is not enabled here`);
    const now = this.options.clock.now();
    await this.queue.enqueue({
      batchId: input.batchId,
      endpoint,
      model,
      requests: input.requests,
      now,
      deadlineAt: now + REALTIME_WINDOW_MS,
    });
    this.options.onEnqueued?.(endpoint);
    return { kind: 'submitted', jobId: input.batchId, state: null };
  }

  /**
   * Nothing to adopt: a submission that was cut off is stored again (rows already stored are
   * kept), which is what `[]` makes the pipeline do.
   */
  async findSubmitted(): Promise<FoundJob[]> {
    return [];
  }

  async status(job: JobRef): Promise<JobStatus> {
    const { queued, nextAt } = await this.queue.progress(job.batchId);
    if (queued === 0) return { state: 'ended' };
    const soon = this.options.clock.now() + PROGRESS_CHECK_MS;
    return { state: 'running', expectedEndAt: Math.max(soon, nextAt ?? soon) };
  }

  async *results(job: JobRef): AsyncIterable<RequestResult> {
    for await (const row of this.queue.results(job.batchId)) {
      const { customId } = row;
      if (row.state === 'answered' && row.response !== null) {
        yield { customId, success: true, response: JSON.parse(row.response) };
      } else if (row.state === 'expired') {
        yield { customId, success: false, kind: 'expired', error: row.error ?? 'expired' };
      } else if (row.state === 'canceled') {
        yield { customId, success: false, kind: 'canceled', error: CANCELED_ERROR };
      } else {
        yield { customId, success: false, kind: 'errored', error: row.error ?? 'errored: no message given' };
      }
    }
  }

  /** Requests not in flight are canceled; those in flight end as the endpoint answers. */
  async cancel(job: JobRef): Promise<void> {
    await this.queue.cancel(job.batchId, this.options.clock.now());
  }

  /** The collected batch's rows go. */
  async cleanup(job: JobRef): Promise<void> {
    await this.queue.remove(job.batchId);
  }

  /** Each enabled endpoint: reachable, its models listed by GET {base_url}/models, the latency. */
  async check(): Promise<ProviderCapability[]> {
    return Promise.all(
      [...this.options.endpoints.values()].map((endpoint) =>
        checkEndpoint(endpoint, this.options.modelsOf?.(endpoint.name) ?? []),
      ),
    );
  }
}
