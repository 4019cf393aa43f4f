/**
 * The delivery loop, shared by every channel: find due deliveries, let the slot policy choose
 * (slots.ts: per-host, per-project and process limits, lease-ahead, parking), lease what it
 * chose, run the attempts (attempt.ts) without waiting for them, and record finished attempts in
 * groups (one transaction for the attempts that finish together). No transaction is open while
 * the policy chooses or an attempt runs; leases are renewed while held (lease-renewal.ts).
 */
import type { Clock } from '../domain/clock.js';
import { type AttemptMetrics, attemptMetrics } from '../metrics/delivery-metrics.js';
import type { Logger, Metrics } from '../ports.js';
import type { Database } from '../store/database.js';
import {
  type DeliveryCandidate,
  type DueDelivery,
  findDueDeliveries,
  leaseDeliveries,
  loadLeasedDeliveries,
  nextDeliveryAt,
  releaseDeliveryLeases,
} from '../store/deliveries/claim.js';
import { type FinishedAttempt, recordAttempts } from '../store/deliveries/record-attempts.js';
import { GroupCommitWriter } from '../store/group-commit.js';
import { retryThroughOutage } from '../store/outage.js';
import { concludeAttempt, dispatch, hostAnswer } from './attempt.js';
import type { DeliveryChannel } from './channel.js';
import { LeaseRenewal } from './lease-renewal.js';
import { DeliverySlots, type Freed, LEASE_AHEAD_ROUNDS, SLOW_DEFER_MS, type SlotCandidate } from './slots.js';

export interface DelivererSettings {
  retryDelaysMs: readonly number[];
  /** A delivery's lease (BARGE_LEASE_MS), renewed while its attempt runs. */
  leaseMs: number;
  /** Attempts in flight at once in this process, and per receiving host. */
  maxInFlight: number;
  maxPerHost: number;
}

export interface DelivererDeps {
  database: Database;
  clock: Clock;
  workerId: string;
  log: Logger;
  /** Attempts counted by channel, outcome and verdict, and timed (src/metrics/delivery-metrics.ts). */
  metrics: Metrics;
  channels: ReadonlyMap<string, DeliveryChannel>;
  settings: DelivererSettings;
  /**
   * Makes the loop run a step soon: the scheduler has room to claim more, or a retry was recorded
   * (the loop's planned sleep was computed before that retry existed).
   */
  wake: () => void;
  /** An incident mail was queued in the outbox: its sender may run now. */
  onMailQueued?: () => void;
}

/** A delivery for a channel this process does not run is looked at again after this. */
const NO_CHANNEL_DEFER_MS = 1000;
/** Finished attempts recorded in one transaction, at most. */
const RECORD_GROUP = 500;
/**
 * How often, at most, a step looks past the projects whose due deliveries fill its window and
 * cannot start: that look scans their backlog, so it is rationed; another project's delivery
 * behind such a backlog waits at most this long for it.
 */
const LOOK_PAST_MS = 500;

/** A leased delivery: what the policy decided on, and what the attempt needs. */
interface Held {
  candidate: SlotCandidate;
  channel: DeliveryChannel;
  item: DueDelivery;
}

export class Deliverer {
  private readonly slots: DeliverySlots<Held>;
  private readonly running = new Set<Promise<void>>();
  private readonly recorder: GroupCommitWriter<FinishedAttempt>;
  private readonly leases: LeaseRenewal;
  private readonly attempts: AttemptMetrics;
  /** The last step ran out of room: the next finished attempt wakes the loop. */
  private roomExhausted = false;
  /**
   * The last step leased what it could and pushed nothing back: until a slot frees, the same due
   * deliveries would come up again, so the loop's immediate next step skips the query.
   */
  private unchanged = false;
  private stopping = false;
  private lookPastAt = 0;

  constructor(private readonly deps: DelivererDeps) {
    const { settings } = deps;
    this.slots = new DeliverySlots({ maxInFlight: settings.maxInFlight, maxPerHost: settings.maxPerHost });
    // An attempt made while the database went away is recorded once it is back (within the
    // lease), not left leased until the lease runs out and then made again.
    this.recorder = new GroupCommitWriter(
      (finished) => retryThroughOutage(() => recordAttempts(deps.database, finished), settings.leaseMs),
      { intervalMs: 0, maxRows: RECORD_GROUP },
    );
    this.leases = new LeaseRenewal({ ...deps, leaseMs: settings.leaseMs });
    this.attempts = attemptMetrics(deps.metrics, deps.channels.keys());
  }

  /** One scheduling pass: starts what is due and has room; does not wait for the attempts. */
  async step(): Promise<{ didWork: boolean; nextAt: number | null }> {
    const { database, clock, workerId, settings } = this.deps;
    if (this.stopping) return { didWork: false, nextAt: null };
    if (this.slots.full) {
      this.roomExhausted = true;
      return { didWork: false, nextAt: null };
    }
    const now = clock.now();
    if (this.unchanged) {
      this.unchanged = false;
      return { didWork: false, nextAt: now + SLOW_DEFER_MS };
    }
    const at = performance.now();
    this.startFreed(this.slots.freed(at), at);

    const limit = Math.max(64, (2 + LEASE_AHEAD_ROUNDS) * settings.maxPerHost);
    const window = await this.candidates(now, limit);
    let { candidates } = window;
    let plan = this.slots.plan(candidates, now, at);
    if (window.rows === limit && plan.blockedProjects.length > 0 && at >= this.lookPastAt) {
      this.lookPastAt = at + LOOK_PAST_MS;
      const more = await this.candidates(now, limit, plan.blockedProjects);
      window.defer.push(...more.defer);
      const seen = new Set(candidates.map((c) => c.id));
      candidates = [...candidates, ...more.candidates.filter((c) => !seen.has(c.id))];
      plan = this.slots.plan(candidates, now, at);
    }
    this.roomExhausted ||= plan.roomExhausted;
    const defer = [...window.defer, ...plan.defer];
    const chosen = new Map([...plan.start, ...plan.ahead].map((c) => [c.id, c]));
    const won = await leaseDeliveries(database, {
      workerId,
      now,
      leaseMs: settings.leaseMs,
      lease: [...chosen.keys()],
      defer,
    });
    const items = won.length > 0 ? await loadLeasedDeliveries(database, won, workerId, now) : [];
    this.leases.hold(items.map((item) => item.delivery.id));
    for (const item of items) {
      const candidate = chosen.get(item.delivery.id) as SlotCandidate;
      const held = { candidate, item, channel: this.deps.channels.get(item.delivery.channel) as DeliveryChannel };
      const startAt = performance.now();
      if (this.slots.admit(candidate, held, startAt)) this.start(held, startAt);
    }
    this.unchanged = items.length > 0 && defer.length === 0;
    if (items.length > 0) return { didWork: true, nextAt: null };
    // Due deliveries wait for a slot of a busy host: a finished attempt wakes the loop (this is the safety net).
    if (plan.waitingForSlot) return { didWork: false, nextAt: now + SLOW_DEFER_MS };
    return { didWork: false, nextAt: await nextDeliveryAt(database) };
  }

  /** Waits for attempts in flight (bounded by the receiver timeout), then gives up every lease left. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.slots.takeWaiting();
    const all = Promise.all(this.running);
    await Promise.race([all, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    await this.leases.stop();
    await releaseDeliveryLeases(this.deps.database, this.deps.workerId, this.deps.clock.now());
  }

  /** Attempts in flight and leased ahead, until recorded (tests wait for them). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }

  /**
   * Due deliveries with their concurrency keys, and those no channel of this process runs. One this
   * worker still holds, its lease lapsed (a renewal came late on a loaded machine), is not due
   * here: it is not attempted twice at once, and its lease is renewed now, so that it is not found
   * due again at every step until the timer's renewal.
   */
  private async candidates(now: number, limit: number, skipProjects?: readonly string[]) {
    const found = await findDueDeliveries(this.deps.database, { now, limit, skipProjects });
    const rows = found.filter((row) => !this.leases.holds(row.id));
    if (rows.length < found.length) await this.leases.renew();
    const defer: { id: string; until: number }[] = [];
    const keyed = await Promise.all(
      rows.map(async (row: DeliveryCandidate): Promise<SlotCandidate | null> => {
        const channel = this.deps.channels.get(row.channel);
        if (!channel) {
          defer.push({ id: row.id, until: now + NO_CHANNEL_DEFER_MS });
          return null;
        }
        return { id: row.id, projectId: row.projectId, key: `${channel.name}:${await channel.concurrencyKey(row)}` };
      }),
    );
    return { rows: found.length, candidates: keyed.filter((c) => c !== null), defer };
  }

  private track(work: Promise<void>): void {
    const run = work.finally(() => this.running.delete(run));
    this.running.add(run);
  }

  /** Deliveries leased ahead start as slots free; those that waited too long are given back. */
  private startFreed(freed: Freed<Held>, at: number): void {
    for (const { item } of freed.start) this.start(item, at);
    if (freed.stale.length === 0) return;
    const ids = freed.stale.map((held) => held.item.delivery.id);
    this.leases.release(ids);
    this.track(
      releaseDeliveryLeases(this.deps.database, this.deps.workerId, this.deps.clock.now(), ids).catch((err: unknown) =>
        this.deps.log.error({ err }, 'could not give leases back'),
      ),
    );
  }

  /** Runs one attempt; its slot frees when the request is over, before the record. */
  private start(held: Held, at: number): void {
    const { deps } = this;
    const id = held.item.delivery.id;
    const attempt = async () => {
      const dispatched = await dispatch(held.channel, held.item, deps.clock);
      const freedAt = performance.now();
      this.startFreed(this.slots.finish(held.candidate, at, hostAnswer(dispatched.outcome), freedAt), freedAt);
      this.unchanged = false;
      if (this.roomExhausted || this.slots.wantsMore(held.candidate.key)) {
        this.roomExhausted = false;
        deps.wake();
      }
      const verdict = await concludeAttempt(
        { ...deps, retryDelaysMs: deps.settings.retryDelaysMs, record: (f) => this.recorder.write(f) },
        held.channel,
        held.item,
        dispatched,
      );
      const { outcome } = dispatched;
      this.attempts.attempted(
        held.channel.name,
        outcome.kind === 'delivered' ? 'delivered' : outcome.errorClass,
        verdict.kind,
        dispatched.durationMs / 1000,
      );
      if (verdict.kind === 'retry') {
        // Only now is the retry's due time in the database: a step that ran before this commit (a
        // freed slot wakes one at once) planned its sleep without it.
        this.unchanged = false;
        deps.wake();
      }
    };
    this.track(
      attempt()
        .catch((err: unknown) => deps.log.error({ delivery: id, err }, 'delivery attempt failed to record'))
        .finally(() => this.leases.release([id])),
    );
  }
}
