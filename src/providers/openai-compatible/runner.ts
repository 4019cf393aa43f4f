/**
 * The endpoint runner: in each worker, one loop per enabled endpoint claims that endpoint's due
 * requests (as many as leave every worker's requests in flight at its max_concurrency: the claim
 * counts the live leases in the database), sends them at once without waiting on each other, and
 * stores how each ended; answers that end together are stored in one transaction. A request is
 * leased for the endpoint's timeout plus a margin before it is sent: a worker that dies mid-request
 * lets the lease lapse, and the request is sent again, so at most the requests in flight at a
 * crash are sent twice; an answer is stored only under its lease, so each is stored once.
 */
import type { Clock } from '../../domain/clock.js';
import {
  type ClaimedRequest,
  REALTIME_EXPIRED_ERROR,
  type RealtimeQueue,
  type Settlement,
} from '../../domain/realtime-requests.js';
import { Loop, type StepOutcome } from '../../loop.js';
import type { Logger, Metrics } from '../../ports.js';
import { type Endpoint, type SendOutcome, sendChatCompletion } from './send-request.js';

/** Retries wait 1 s, 2 s, 4 s … up to this (or what the endpoint's Retry-After says). */
const RETRY_MAX_MS = 300_000;
/** How soon a worker looks again while the endpoint's slots are all held by other workers. */
const OTHERS_FULL_RECHECK_MS = 100;
/**
 * How soon an idle worker looks for requests anyway: batches another worker submitted do not wake
 * this process, and a worker should join in within a second.
 */
const IDLE_RECHECK_MS = 1_000;

/**
 * A request's lease: the endpoint's timeout (the send is abandoned then) plus a margin to store
 * the outcome, at most 10 s, never more than the timeout itself, so a short test timeout makes a
 * short lease.
 */
export function leaseMsOf(endpoint: Endpoint): number {
  return endpoint.timeoutMs + Math.min(10_000, endpoint.timeoutMs);
}

/** The wait before try `attempts + 1`: exponential from 1 s, with ±25 % jitter so retries of a burst spread out. */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(RETRY_MAX_MS, 1000 * 2 ** Math.min(Math.max(0, attempts - 1), 20));
  return Math.round(base * (0.75 + random() * 0.5));
}

/** How a sent request's outcome is stored: a retry past the request's deadline expires it instead. */
export function settlementOf(request: ClaimedRequest, outcome: SendOutcome, now: number): Settlement {
  const key = { batchId: request.batchId, customId: request.customId };
  switch (outcome.kind) {
    case 'answered':
      return { ...key, kind: 'answered', response: outcome.response };
    case 'refused':
      return { ...key, kind: 'failed', error: outcome.error };
    case 'retry': {
      const at = now + (outcome.retryAfterMs ?? retryDelayMs(request.attempts));
      if (at >= request.deadlineAt) {
        return { ...key, kind: 'expired', error: `${REALTIME_EXPIRED_ERROR} (the last try: ${outcome.error})` };
      }
      return { ...key, kind: 'retry', at, error: outcome.error };
    }
  }
}

export interface RunnerDeps {
  queue: RealtimeQueue;
  clock: Clock;
  workerId: string;
  log: Logger;
  metrics: Metrics;
  idleMaxMs: number;
}

/** One endpoint's requests in this worker. */
class EndpointRunner {
  readonly loop: Loop;
  private readonly inFlight = new Set<Promise<void>>();
  private pending: { settlement: Settlement; stored: () => void }[] = [];
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly deps: RunnerDeps,
  ) {
    const { clock, log, metrics, idleMaxMs } = deps;
    this.loop = new Loop(`realtime:${endpoint.name}`, () => this.step(), { clock, log, metrics, idleMaxMs });
  }

  /** Claims into this worker's free room and starts the sends; sleeps until a settle, a due try, or a lapsing lease. */
  async step(): Promise<StepOutcome> {
    const started = await this.claimAndSend();
    if (started.count > 0) return { didWork: true, nextAt: null };
    const now = this.deps.clock.now();
    // Own requests in flight: their settles wake the loop. Every slot held by other workers:
    // their settles do not reach this process, so look again shortly.
    if (this.inFlight.size > 0) return { didWork: false, nextAt: null };
    if (started.full) return { didWork: false, nextAt: now + OTHERS_FULL_RECHECK_MS };
    const due = await this.deps.queue.nextDueAt(this.endpoint.name);
    return { didWork: false, nextAt: Math.min(due ?? Number.POSITIVE_INFINITY, now + IDLE_RECHECK_MS) };
  }

  /** Tests: claims and sends until nothing is due, each round waited for; whether anything was sent. */
  async runOnce(): Promise<boolean> {
    let any = false;
    for (;;) {
      const { count } = await this.claimAndSend();
      await this.drain();
      if (count === 0) return any;
      any = true;
    }
  }

  /** Waits for the sends in flight and their settles. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private async claimAndSend(): Promise<{ count: number; full: boolean }> {
    const room = this.endpoint.maxConcurrency - this.inFlight.size;
    if (room <= 0) return { count: 0, full: true };
    const { claimed, inFlight } = await this.deps.queue.claim({
      endpoint: this.endpoint.name,
      maxConcurrency: this.endpoint.maxConcurrency,
      limit: room,
      workerId: this.deps.workerId,
      now: this.deps.clock.now(),
      leaseMs: leaseMsOf(this.endpoint),
    });
    for (const request of claimed) this.send(request);
    return { count: claimed.length, full: inFlight >= this.endpoint.maxConcurrency };
  }

  private send(request: ClaimedRequest): void {
    const { clock, log, metrics } = this.deps;
    const labels = { endpoint: this.endpoint.name };
    const done: Promise<void> = (async () => {
      const outcome = await sendChatCompletion(this.endpoint, request, () => clock.now());
      metrics.count('barge_realtime_requests_total', { ...labels, outcome: outcome.kind });
      await this.store(settlementOf(request, outcome, clock.now()));
    })()
      .catch((err: unknown) => log.error({ endpoint: this.endpoint.name, err }, 'a real-time request failed'))
      .finally(() => {
        this.inFlight.delete(done);
        this.loop.wake();
      });
    this.inFlight.add(done);
  }

  /** Resolves once the settlement is committed (with whatever else ended meanwhile). */
  private store(settlement: Settlement): Promise<void> {
    return new Promise((stored) => {
      this.pending.push({ settlement, stored });
      this.flushing ??= this.flush();
    });
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const group = this.pending.splice(0);
      try {
        await this.deps.queue.settle(
          this.deps.workerId,
          group.map((p) => p.settlement),
          this.deps.clock.now(),
        );
      } catch (err) {
        // Not stored: the leases lapse and the requests are sent again (at most twice in all).
        this.deps.log.warn({ endpoint: this.endpoint.name, err }, 'could not store real-time answers');
      }
      for (const p of group) p.stored();
    }
    this.flushing = null;
  }
}

/** Every enabled endpoint's runner in this worker. */
export class RealtimeRunner {
  private readonly runners: Map<string, EndpointRunner>;

  constructor(endpoints: Iterable<Endpoint>, deps: RunnerDeps) {
    this.runners = new Map([...endpoints].map((e) => [e.name, new EndpointRunner(e, deps)]));
  }

  get loops(): Loop[] {
    return [...this.runners.values()].map((r) => r.loop);
  }

  /** A batch's requests were stored for this endpoint. */
  wake(endpoint: string): void {
    this.runners.get(endpoint)?.loop.wake();
  }

  async runOnce(): Promise<boolean> {
    const worked = await Promise.all([...this.runners.values()].map((r) => r.runOnce()));
    return worked.some(Boolean);
  }

  /** Stops claiming, and waits (bounded) for the requests in flight to be answered and stored. */
  async stop(graceMs: number): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.stop()));
    const drained = Promise.all([...this.runners.values()].map((r) => r.drain()));
    await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
  }
}
