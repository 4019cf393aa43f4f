/**
 * The endpoint runner: in each worker, one per enabled endpoint. It leases due requests and holds
 * slots of the endpoint (store/realtime/claim.ts: `max_concurrency` slots across every worker),
 * and sends a leased request whenever one of its slots is free, without waiting on the others or
 * on the database: an answer frees its slot for the next leased request at once, and the outcomes
 * that ended meanwhile are stored, with the next leases, in one transaction.
 *
 * Crash safety: a request is leased before it is sent and its outcome stored only under that
 * lease, so each is answered once in the results. A worker that dies lets its leases lapse; the
 * requests it had sent are sent again, so at most the requests in flight at a crash are sent twice
 * (those it had leased but not sent were never sent).
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
 * The margin past the endpoint's timeout (the send is abandoned then) to store the outcome: at most
 * 10 s, never more than the timeout itself, so a short test timeout makes short leases.
 */
function marginMs(endpoint: Endpoint): number {
  return Math.min(10_000, endpoint.timeoutMs);
}

/** A slot's lease, renewed by every write: a send starts only while its timeout fits in it. */
export function slotLeaseMsOf(endpoint: Endpoint): number {
  return endpoint.timeoutMs + marginMs(endpoint);
}

/**
 * A request's lease: it waits at most one request's time for a slot (the runner leases no more
 * than one request behind each slot), then is sent, with the margin to store its outcome.
 */
export function requestLeaseMsOf(endpoint: Endpoint): number {
  return 2 * endpoint.timeoutMs + marginMs(endpoint);
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
  /** Sends in flight, each until its outcome is handed to the writes. */
  private readonly inFlight = new Map<object, Promise<void>>();
  /** Leased, waiting for a slot. */
  private waiting: ClaimedRequest[] = [];
  /** Slots held, and until when (a send starts only while its timeout fits). */
  private slots = 0;
  private slotsUntil = 0;
  private pending: { settlement: Settlement; stored: () => void }[] = [];
  private writing: Promise<void> | null = null;
  private slotsMade = false;
  private stopping = false;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly deps: RunnerDeps,
  ) {
    const { clock, log, metrics, idleMaxMs } = deps;
    this.loop = new Loop(`realtime:${endpoint.name}`, () => this.step(), { clock, log, metrics, idleMaxMs });
  }

  /**
   * A write that leases what is due and takes slots for it; the writes that store answers do the
   * same as they go, so this runs when woken (a batch stored), when a retry falls due, or to look
   * again while other workers hold every slot.
   */
  async step(): Promise<StepOutcome> {
    // Idle and holding no slot: a read says whether a write would lease anything, so an idle
    // worker looks every second without writing.
    if (this.idle() && this.slots === 0) {
      const next = await this.nextLook();
      if (next > this.deps.clock.now()) return { didWork: false, nextAt: next };
    }
    await this.write();
    const now = this.deps.clock.now();
    // Busy: the writes that follow the answers lease what comes next.
    if (this.inFlight.size > 0) return { didWork: false, nextAt: null };
    // Leased, but no slot: other workers hold them all, and their answers do not reach this process.
    if (this.waiting.length > 0) return { didWork: false, nextAt: now + OTHERS_FULL_RECHECK_MS };
    return { didWork: false, nextAt: await this.nextLook() };
  }

  private idle(): boolean {
    return this.inFlight.size === 0 && this.waiting.length === 0 && this.pending.length === 0;
  }

  /** When the next try is due, and within a second anyway for batches other workers submit. */
  private async nextLook(): Promise<number> {
    const now = this.deps.clock.now();
    const due = await this.deps.queue.nextDueAt(this.endpoint.name);
    return Math.max(now, Math.min(due ?? Number.POSITIVE_INFINITY, now + IDLE_RECHECK_MS));
  }

  /** Tests: leases and sends until nothing is due, each round waited for; whether anything was sent. */
  async runOnce(): Promise<boolean> {
    let any = false;
    for (;;) {
      await this.write();
      if (this.inFlight.size === 0 && this.waiting.length === 0) return any;
      any = true;
      await this.drain();
    }
  }

  /** Waits for the sends in flight and the writes of their outcomes. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0 || this.writing) await Promise.all([...this.inFlight.values(), this.writing]);
  }

  /** No more leases or sends; what was leased and not sent is given back by the last write. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.drain();
    await this.write();
  }

  /**
   * Stores the outcomes pending, leases enough to keep every slot busy with one request waiting
   * behind each, and takes the slots for them; then sends what the slots allow. One at a time.
   */
  private write(): Promise<void> {
    this.writing ??= this.writeAll().finally(() => {
      this.writing = null;
      // An outcome handed over after the last round looked: it gets a round of its own.
      if (this.pending.length > 0) void this.write();
    });
    return this.writing;
  }

  private async writeAll(): Promise<void> {
    do {
      const group = this.pending.splice(0);
      const released: Settlement[] = this.stopping
        ? this.waiting.splice(0).map((r) => ({ batchId: r.batchId, customId: r.customId, kind: 'release' as const }))
        : [];
      const { queue, clock, workerId } = this.deps;
      const { maxConcurrency } = this.endpoint;
      const now = clock.now();
      const limit = this.stopping ? 0 : Math.max(0, 2 * maxConcurrency - this.inFlight.size - this.waiting.length);
      try {
        const { claimed, slots } = await queue.settleAndClaim({
          workerId,
          now,
          settlements: [...group.map((p) => p.settlement), ...released],
          endpoint: this.endpoint.name,
          maxConcurrency,
          limit,
          requestLeaseMs: requestLeaseMsOf(this.endpoint),
          slotLeaseMs: slotLeaseMsOf(this.endpoint),
          ensureSlots: !this.slotsMade,
        });
        this.slotsMade = true;
        this.slots = slots;
        this.slotsUntil = now + slotLeaseMsOf(this.endpoint);
        this.waiting.push(...claimed);
      } catch (err) {
        // Not stored: the leases lapse and the requests are sent again (at most twice in all).
        this.deps.log.warn({ endpoint: this.endpoint.name, err }, 'could not store real-time answers');
      }
      for (const p of group) p.stored();
      this.sendWhatFits();
    } while (this.pending.length > 0);
  }

  /** Sends waiting requests into the free slots, while a send's timeout fits in the slots' lease. */
  private sendWhatFits(): void {
    const now = this.deps.clock.now();
    const { timeoutMs } = this.endpoint;
    while (!this.stopping && this.inFlight.size < this.slots && now + timeoutMs <= this.slotsUntil) {
      const request = this.waiting.shift();
      if (!request) return;
      // Leased too long ago to be answered and stored under the lease: another worker may take it.
      if (now + timeoutMs + marginMs(this.endpoint) / 2 > request.leasedUntil) continue;
      this.send(request);
    }
  }

  private send(request: ClaimedRequest): void {
    const { clock, log, metrics } = this.deps;
    const slot = {};
    const done = (async () => {
      const outcome = await sendChatCompletion(this.endpoint, request, () => clock.now());
      metrics.count('barge_realtime_requests_total', { endpoint: this.endpoint.name, outcome: outcome.kind });
      const stored = this.store(settlementOf(request, outcome, clock.now()));
      // The slot is free: the next waiting request goes now, not after the write.
      this.inFlight.delete(slot);
      this.sendWhatFits();
      await stored;
    })()
      .catch((err: unknown) => log.error({ endpoint: this.endpoint.name, err }, 'a real-time request failed'))
      .finally(() => {
        this.inFlight.delete(slot);
        if (this.inFlight.size === 0 && this.waiting.length === 0) this.loop.wake();
      });
    this.inFlight.set(slot, done);
  }

  /** Resolves once the outcome is committed, with whatever else ended meanwhile. */
  private store(settlement: Settlement): Promise<void> {
    return new Promise((stored) => {
      this.pending.push({ settlement, stored });
      void this.write();
    });
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

  /**
   * Waits (bounded) for the requests in flight to be answered and stored; what was leased and not
   * sent is given back. The caller has stopped `loops` first (PipelineWorker stops all of its loops).
   */
  async stop(graceMs: number): Promise<void> {
    const stopped = Promise.all([...this.runners.values()].map((r) => r.stop()));
    await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
  }
}
