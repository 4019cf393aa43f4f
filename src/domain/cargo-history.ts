/**
 * A cargo's status history, told from what its rows record: no history table is written on the
 * pipeline's hot path (it would add a row to every move of every cargo). Every move leaves a time
 * on some row:
 * - pending: the cargo's `created_at`; batched: its batch's `created_at`; processing: the batch's
 *   `submitted_at` (the provider accepted it);
 * - completed, failed or callback_pending: the result's `created_at` (stored in the transaction
 *   that moves the cargo);
 * - each redelivery: callback_pending at its deliveries' `created_at` (one time for all of its
 *   channels); callback_delivered or callback_failed: the last `ended_at` of a round of
 *   deliveries, failed when one of them failed (a round covers every channel the cargo asked for);
 * - canceled: the cargo's `updated_at` (nothing moves a canceled cargo again).
 * What the rows cannot tell: a batch taken back before its submission (a refill) puts its cargo
 * back to pending and batches them again, and only the batch's first forming is recorded. When the
 * story told does not end in the cargo's status, its last move is added at its `updated_at`.
 */
import type { CargoStatus } from './lifecycle.js';

export interface HistoryEntry {
  status: CargoStatus;
  at: number;
}

export interface HistoryRows {
  status: CargoStatus;
  createdAt: number;
  updatedAt: number;
  batch: { createdAt: number; submittedAt: number | null } | null;
  result: { createdAt: number; success: boolean } | null;
  /** Its deliveries, oldest first. */
  deliveries: readonly { trigger: string; createdAt: number; endedAt: number | null; status: string }[];
}

export function cargoHistory(rows: HistoryRows): HistoryEntry[] {
  const history: HistoryEntry[] = [{ status: 'pending', at: rows.createdAt }];
  const add = (status: CargoStatus, at: number) => history.push({ status, at });
  if (rows.batch && rows.status !== 'pending') {
    add('batched', rows.batch.createdAt);
    if (rows.batch.submittedAt !== null && rows.status !== 'batched' && rows.status !== 'canceled') {
      add('processing', rows.batch.submittedAt);
    }
  }
  if (rows.result) {
    const delivering = rows.deliveries.some((d) => d.trigger.startsWith('result'));
    add(delivering ? 'callback_pending' : rows.result.success ? 'completed' : 'failed', rows.result.createdAt);
  }
  for (const { redelivery, round } of deliveryRounds(rows.deliveries)) {
    if (redelivery) add('callback_pending', (round[0] as (typeof round)[number]).createdAt);
    if (round.every((d) => d.endedAt !== null)) {
      const at = Math.max(...round.map((d) => d.endedAt as number));
      add(round.some((d) => d.status === 'failed') ? 'callback_failed' : 'callback_delivered', at);
    }
  }
  const last = history[history.length - 1] as HistoryEntry;
  if (last.status !== rows.status) add(rows.status, Math.max(rows.updatedAt, last.at));
  return history;
}

/**
 * The deliveries in rounds: the result's (`result`, and `result_duplicate` of old databases), then
 * one round per redelivery, each made at one time.
 */
function deliveryRounds<D extends { trigger: string; createdAt: number }>(
  deliveries: readonly D[],
): { redelivery: boolean; round: D[] }[] {
  const fromResult = deliveries.filter((d) => d.trigger.startsWith('result'));
  const byTime = new Map<number, D[]>();
  for (const d of deliveries) {
    if (!d.trigger.startsWith('result')) byTime.set(d.createdAt, [...(byTime.get(d.createdAt) ?? []), d]);
  }
  return [
    ...(fromResult.length > 0 ? [{ redelivery: false, round: fromResult }] : []),
    ...[...byTime.values()].map((round) => ({ redelivery: true, round })),
  ];
}
