/**
 * One delivery attempt, in one place (svix's CompletedDispatch): dispatch through the channel →
 * an outcome value → the verdict (delivered, retry at a time, failed for good) → the connection
 * effect and the append-only attempt record.
 */
import type { Clock } from '../domain/clock.js';
import { nextAttemptAt } from '../domain/retry-schedule.js';
import type { Logger } from '../ports.js';
import { applyConnectionEffect } from '../store/admin/connections.js';
import type { Database } from '../store/database.js';
import type { DueDelivery } from '../store/deliveries/claim.js';
import type { AttemptVerdict, FinishedAttempt } from '../store/deliveries/record-attempts.js';
import { type DeliveryChannel, type DispatchOutcome, failed } from './channel.js';
import type { HostAnswer } from './slots.js';

export interface Dispatched {
  outcome: DispatchOutcome;
  /** Epoch ms (the clock's), for the record and the retry schedule. */
  startedAt: number;
  durationMs: number;
}

/** Sends one delivery; never throws (a channel's bug becomes an `internal` failure). */
export async function dispatch(channel: DeliveryChannel, item: DueDelivery, clock: Clock): Promise<Dispatched> {
  const startedAt = clock.now();
  const started = performance.now();
  let outcome: DispatchOutcome;
  try {
    outcome = await channel.deliver(item);
  } catch (err) {
    outcome = failed('internal', err instanceof Error ? err.message : String(err));
  }
  return { outcome, startedAt, durationMs: Math.round(performance.now() - started) };
}

/** What the outcome says about the receiving host's health (parking: slots.ts). */
export function hostAnswer(outcome: DispatchOutcome): HostAnswer {
  if (outcome.kind === 'delivered' || outcome.statusCode !== null) return 'answered';
  return outcome.errorClass === 'timeout' ? 'timeout' : 'unreachable';
}

/** Delivered, or failed: retried on the schedule while it lasts and the failure may pass. */
function verdictOf(
  outcome: DispatchOutcome,
  attemptsMade: number,
  startedAt: number,
  delays: readonly number[],
): AttemptVerdict {
  if (outcome.kind === 'delivered') return { kind: 'delivered' };
  const next = outcome.retryable ? nextAttemptAt(attemptsMade, startedAt, delays) : null;
  return next === null ? { kind: 'failed' } : { kind: 'retry', nextAttemptAt: next };
}

/** The row recordAttempts writes for a dispatched attempt. */
function finishedAttempt(
  item: DueDelivery,
  dispatched: Dispatched,
  verdict: AttemptVerdict,
  workerId: string,
  now: number,
): FinishedAttempt {
  const { outcome } = dispatched;
  return {
    deliveryId: item.delivery.id,
    workerId,
    now,
    verdict,
    attempt: {
      trigger: item.delivery.trigger,
      started_at: dispatched.startedAt,
      duration_ms: dispatched.durationMs,
      status_code: outcome.statusCode,
      error_class: outcome.kind === 'failed' ? outcome.errorClass : null,
      error_detail: outcome.kind === 'failed' ? outcome.detail : null,
      response_excerpt: outcome.responseExcerpt,
    },
  };
}

export interface ConcludeDeps {
  database: Database;
  clock: Clock;
  workerId: string;
  log: Logger;
  retryDelaysMs: readonly number[];
  /** Records a finished attempt (the scheduler's group-commit writer over recordAttempts). */
  record: (finished: FinishedAttempt) => Promise<void>;
  /** An incident mail was queued in the outbox. */
  onMailQueued?: () => void;
}

/**
 * After the request: the verdict, the connection effect, then the record. The effect comes first:
 * if the process dies in between, the attempt is made again and the effect applied again, which
 * changes nothing the second time.
 */
export async function concludeAttempt(
  deps: ConcludeDeps,
  channel: DeliveryChannel,
  item: DueDelivery,
  dispatched: Dispatched,
): Promise<AttemptVerdict> {
  const { outcome } = dispatched;
  const attemptsMade = item.delivery.attempts + 1;
  const verdict = verdictOf(outcome, attemptsMade, dispatched.startedAt, deps.retryDelaysMs);
  if (outcome.effect) await applyEffect(deps, outcome.effect);
  await deps.record(finishedAttempt(item, dispatched, verdict, deps.workerId, deps.clock.now()));
  if (outcome.kind === 'failed') {
    deps.log.warn(
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
  return verdict;
}

/** A connection state change and its incident mail, in one transaction (store/connections.ts). */
async function applyEffect(deps: ConcludeDeps, effect: NonNullable<DispatchOutcome['effect']>): Promise<void> {
  try {
    const { changed, mailQueued } = await applyConnectionEffect(deps.database, effect, deps.clock.now());
    if (mailQueued) deps.onMailQueued?.();
    if (changed && effect.to === 'failed') {
      deps.log.warn(
        { connection: effect.connectionId, mail: effect.mail ? 'queued' : 'no notification address' },
        'connection marked failed',
      );
    }
  } catch (err) {
    deps.log.error({ connection: effect.connectionId, err }, 'could not record the connection state');
  }
}
