import type { Clock } from '../domain/clock.js';
import { nextAttemptAt } from '../domain/retry-schedule.js';
import type { Logger } from '../ports.js';
import { applyConnectionEffect } from '../store/connections.js';
import type { Database } from '../store/database.js';
import {
  type AttemptVerdict,
  type ClaimChoice,
  claimDueDeliveries,
  type DeliveryCandidate,
  type DueDelivery,
  type FinishedAttempt,
  nextDeliveryAt,
  recordAttempts,
  releaseDeliveryLeases,
} from '../store/deliveries.js';
import { GroupCommitWriter } from '../store/group-commit.js';
import { retryThroughOutage } from '../store/outage.js';
import { type ConnectionEffect, type DeliveryChannel, type DispatchOutcome, failed } from './channel.js';

export interface DelivererSettings {
  retryDelaysMs: readonly number[];
  /** An attempt's lease: longer than the longest attempt (the receiver timeout). */
  leaseMs: number;
  /**
   * Attempts in flight (started, not yet recorded) at once in this process, and per receiving
   * host; deliveries leased ahead for busy hosts are bounded by maxInFlight too.
   */
  maxInFlight: number;
  maxPerHost: number;
}

export interface DelivererDeps {
  database: Database;
  clock: Clock;
  workerId: string;
  log: Logger;
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

/**
 * A host at its limit whose oldest open request is younger than this frees a slot any moment:
 * its due deliveries are left as they are, and some are leased ahead to start the moment a slot
 * frees.
 */
const FAST_HOST_MS = 250;
/**
 * Deliveries leased ahead for a busy fast host, in rounds of maxPerHost, topped up when half have
 * started: one claim (a commit, a few milliseconds) then serves many attempts, and the host's
 * slots never wait for it.
 */
const LEASE_AHEAD_ROUNDS = 6;
/** The longest a slow host's waiting deliveries are pushed back at a time. */
const SLOW_HOST_DEFER_MS = 1000;
/** A delivery for a channel this process does not run is looked at again after this. */
const NO_CHANNEL_DEFER_MS = 1000;
/**
 * A delivery leased ahead starts only within this of its lease; later its lease is given back
 * (the lease outlives the longest attempt by 30 s: registry.ts).
 */
const WAIT_MAX_MS = 10_000;
/** Finished attempts recorded in one transaction, at most. */
const RECORD_GROUP = 500;

interface Waiting {
  item: DueDelivery;
  channel: DeliveryChannel;
  leasedAt: number;
}

/** One receiving host (or bucket): its open requests and the deliveries leased ahead for it. */
interface Host {
  /** Start times (performance.now()) of the requests open now, oldest first. */
  open: number[];
  waiting: Waiting[];
}

/**
 * The attempt scheduler shared by every channel: claims due deliveries with leases, runs their
 * attempts concurrently (a global and a per-host limit, so a receiver that hangs or fails holds at
 * most its own slots), and records each attempt with its consequence.
 *
 * Claiming looks at the oldest due deliveries and leases only what a host can take: its free
 * slots and, for a busy host that turns requests over quickly, a few rounds more that wait in
 * memory and start as slots free, so one claim serves many attempts. A host whose requests take
 * long (a slow or hanging receiver) gets only its free slots, and its other due deliveries are
 * pushed back by about its request time so the deliveries behind them come into view. (Claiming
 * blindly and deferring every delivery of a full host by a fixed second capped a host at
 * maxPerHost deliveries a second, and cost a write per deferred delivery.)
 *
 * Attempts that finish together are recorded together, in one transaction (group commit), and
 * a host's slot is free as soon as its request is over, before the record.
 */
export class Deliverer {
  /** Attempts started and not yet recorded. */
  private inFlight = 0;
  private waitingCount = 0;
  private readonly hosts = new Map<string, Host>();
  private readonly running = new Set<Promise<void>>();
  private readonly recorder: GroupCommitWriter<FinishedAttempt>;
  /** The last step ran out of room: the next recorded attempt wakes the loop. */
  private roomExhausted = false;
  /**
   * The last step leased what it could and pushed nothing back: until a slot frees, the same due
   * deliveries would come up again, so the loop's immediate next step skips the query.
   */
  private unchanged = false;
  private stopping = false;

  constructor(private readonly deps: DelivererDeps) {
    // An attempt made while the database went away is recorded once it is back (within the
    // lease), not left leased until the lease runs out and then made again.
    this.recorder = new GroupCommitWriter(
      (finished) => retryThroughOutage(() => recordAttempts(deps.database, finished), deps.settings.leaseMs),
      {
        intervalMs: 0,
        maxRows: RECORD_GROUP,
      },
    );
  }

  /** One scheduling pass: starts what is due and has room; does not wait for the attempts. */
  async step(): Promise<{ didWork: boolean; nextAt: number | null }> {
    const { database, clock, workerId, settings } = this.deps;
    // Two budgets of maxInFlight each: attempts started and not yet recorded, and deliveries
    // leased ahead.
    let startRoom = settings.maxInFlight - this.inFlight;
    let aheadRoom = settings.maxInFlight - this.waitingCount;
    if (startRoom <= 0) {
      this.roomExhausted = true;
      return { didWork: false, nextAt: null };
    }
    const now = clock.now();
    if (this.unchanged) {
      this.unchanged = false;
      return { didWork: false, nextAt: now + SLOW_HOST_DEFER_MS };
    }
    const chosen = new Map<string, { channel: DeliveryChannel; key: string }>();
    let waitingForSlot = false;
    const choose = (candidates: DeliveryCandidate[]): ClaimChoice => {
      const choice: ClaimChoice = { lease: [], defer: [] };
      const planned = new Map<string, number>();
      const perf = performance.now();
      for (const candidate of candidates) {
        const channel = this.deps.channels.get(candidate.channel);
        if (!channel) {
          choice.defer.push({ id: candidate.id, until: now + NO_CHANNEL_DEFER_MS });
          continue;
        }
        const key = `${channel.name}:${channel.concurrencyKey(candidate)}`;
        const host = this.hosts.get(key);
        const open = host?.open.length ?? 0;
        const taken = open + (host?.waiting.length ?? 0) + (planned.get(key) ?? 0);
        const waited = host?.open[0] === undefined ? 0 : perf - host.open[0];
        const fast = waited < FAST_HOST_MS;
        const lease = () => {
          choice.lease.push(candidate.id);
          planned.set(key, (planned.get(key) ?? 0) + 1);
          chosen.set(candidate.id, { channel, key });
        };
        if (taken < settings.maxPerHost) {
          // A free slot.
          if (startRoom <= 0) {
            this.roomExhausted = true;
            continue;
          }
          startRoom--;
          lease();
        } else if (
          fast &&
          open > 0 &&
          (host?.waiting.length ?? 0) <= this.refillBelow() &&
          taken < (1 + LEASE_AHEAD_ROUNDS) * settings.maxPerHost
        ) {
          // A busy host that turns requests over quickly, and half of what it had leased ahead
          // has started: lease ahead again, a batch at once.
          if (aheadRoom <= 0) continue;
          aheadRoom--;
          lease();
        } else if (fast) waitingForSlot = true;
        else choice.defer.push({ id: candidate.id, until: now + Math.min(SLOW_HOST_DEFER_MS, Math.ceil(waited)) });
      }
      deferred = choice.defer.length;
      return choice;
    };
    let deferred = 0;
    const limit = Math.max(64, (2 + LEASE_AHEAD_ROUNDS) * settings.maxPerHost);
    const due = await claimDueDeliveries(database, { workerId, now, leaseMs: settings.leaseMs, limit, choose });
    for (const item of due) {
      const target = chosen.get(item.delivery.id);
      if (!target) continue;
      const host = this.host(target.key);
      if (host.open.length < settings.maxPerHost && !this.stopping) this.start(target.channel, target.key, item);
      else {
        host.waiting.push({ item, channel: target.channel, leasedAt: now });
        this.waitingCount++;
      }
    }
    this.unchanged = due.length > 0 && deferred === 0;
    if (due.length > 0) return { didWork: true, nextAt: null };
    // Due deliveries wait for a slot of a busy host: a slot's release wakes the loop (this is the safety net).
    if (waitingForSlot) return { didWork: false, nextAt: now + SLOW_HOST_DEFER_MS };
    return { didWork: false, nextAt: await nextDeliveryAt(database.read) };
  }

  /** Waits for attempts in flight (bounded by the receiver timeout), then gives up every lease left. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    const all = Promise.all(this.running);
    await Promise.race([all, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    await releaseDeliveryLeases(this.deps.database.write, this.deps.workerId, this.deps.clock.now());
  }

  /** Attempts in flight and leased ahead, until recorded (tests wait for them). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }

  /** A fast host is leased ahead for again once no more than this waits for it. */
  private refillBelow(): number {
    return (LEASE_AHEAD_ROUNDS / 2) * this.deps.settings.maxPerHost;
  }

  private host(key: string): Host {
    let host = this.hosts.get(key);
    if (!host) {
      host = { open: [], waiting: [] };
      this.hosts.set(key, host);
    }
    return host;
  }

  private track(work: Promise<void>): void {
    const run = work.finally(() => this.running.delete(run));
    this.running.add(run);
  }

  private start(channel: DeliveryChannel, key: string, item: DueDelivery): void {
    this.inFlight++;
    this.track(
      this.attempt(channel, key, item)
        .catch((err: unknown) =>
          this.deps.log.error({ delivery: item.delivery.id, err }, 'delivery attempt failed to record'),
        )
        .finally(() => {
          this.inFlight--;
          this.unchanged = false;
          if (this.roomExhausted) {
            this.roomExhausted = false;
            this.deps.wake();
          }
        }),
    );
  }

  /** A slot of the host is free: the next delivery leased ahead for it starts, if it still may. */
  private slotFreed(key: string, host: Host): void {
    this.unchanged = false;
    const stale: string[] = [];
    while (host.open.length < this.deps.settings.maxPerHost && host.waiting.length > 0) {
      const next = host.waiting.shift() as Waiting;
      this.waitingCount--;
      if (this.stopping) continue;
      if (this.deps.clock.now() - next.leasedAt > WAIT_MAX_MS) stale.push(next.item.delivery.id);
      else this.start(next.channel, key, next.item);
    }
    if (stale.length > 0) {
      this.track(
        releaseDeliveryLeases(this.deps.database.write, this.deps.workerId, this.deps.clock.now(), stale).catch(
          (err: unknown) => this.deps.log.error({ err }, 'could not give leases back'),
        ),
      );
    }
    if (host.open.length === 0 && host.waiting.length === 0) this.hosts.delete(key);
    // Top the host up once half of what was leased ahead has started (or it has nothing waiting).
    if (host.waiting.length <= this.refillBelow()) this.deps.wake();
  }

  /** A connection state change and its incident mail, in one transaction (store/connections.ts). */
  private async applyEffect(effect: ConnectionEffect): Promise<void> {
    try {
      const { changed, mailQueued } = await applyConnectionEffect(
        this.deps.database.write,
        effect,
        this.deps.clock.now(),
      );
      if (mailQueued) this.deps.onMailQueued?.();
      if (changed && effect.to === 'failed') {
        this.deps.log.warn(
          { connection: effect.connectionId, mail: effect.mail ? 'queued' : 'no notification address' },
          'connection marked failed',
        );
      }
    } catch (err) {
      this.deps.log.error({ connection: effect.connectionId, err }, 'could not record the connection state');
    }
  }

  private async attempt(channel: DeliveryChannel, key: string, item: DueDelivery): Promise<void> {
    const { clock, settings } = this.deps;
    const startedAt = clock.now();
    const started = performance.now();
    const host = this.host(key);
    host.open.push(started);
    let outcome: DispatchOutcome;
    try {
      outcome = await channel.deliver(item);
    } catch (err) {
      outcome = failed('internal', err instanceof Error ? err.message : String(err));
    } finally {
      // The host's slot is free as soon as its request is over; the record follows.
      host.open.splice(host.open.indexOf(started), 1);
      this.slotFreed(key, host);
    }
    const durationMs = Math.round(performance.now() - started);
    const attemptsMade = item.delivery.attempts + 1;
    let verdict: AttemptVerdict = { kind: 'delivered' };
    if (outcome.kind === 'failed') {
      const next = outcome.retryable ? nextAttemptAt(attemptsMade, startedAt, settings.retryDelaysMs) : null;
      verdict = next === null ? { kind: 'failed' } : { kind: 'retry', nextAttemptAt: next };
    }
    // Before the attempt is recorded: if the process dies in between, the attempt is made again
    // and the effect applied again, which changes nothing the second time.
    if (outcome.effect) await this.applyEffect(outcome.effect);
    await this.recorder.write({
      deliveryId: item.delivery.id,
      workerId: this.deps.workerId,
      now: clock.now(),
      verdict,
      attempt: {
        trigger: item.delivery.trigger,
        started_at: startedAt,
        duration_ms: durationMs,
        status_code: outcome.statusCode,
        error_class: outcome.kind === 'failed' ? outcome.errorClass : null,
        error_detail: outcome.kind === 'failed' ? outcome.detail : null,
        response_excerpt: outcome.responseExcerpt,
      },
    });
    if (verdict.kind === 'retry') {
      // Only now is the retry's due time in the database: a step that ran before this commit (a
      // freed slot wakes one at once) planned its sleep without it.
      this.unchanged = false;
      this.deps.wake();
    }
    if (outcome.kind === 'failed') {
      this.deps.log.warn(
        {
          delivery: item.delivery.id,
          cargo: item.cargoId,
          channel: channel.name,
          attempt: attemptsMade,
          error: outcome.errorClass,
        },
        verdict.kind === 'failed' ? 'delivery failed for good' : 'delivery attempt failed',
      );
    }
  }
}
