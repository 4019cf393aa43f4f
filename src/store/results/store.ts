/** Storing results: the result rows, their deliveries and the cargo's move, under the batch's lease. */
import { type CargoStatus, movableFrom } from '../../domain/lifecycle.js';
import type { Usage } from '../../domain/usage.js';
import { chunks, statementChunks } from '../chunks.js';
import type { Database } from '../database.js';
import { type DeliveryRequest, insertDeliveries } from '../deliveries/create.js';
import { assertBatchLease, type BatchLease } from '../leases.js';
import type { DeliveryChannelName } from '../schema.js';

export interface NewResult {
  cargoId: string;
  success: boolean;
  /** JSON text of the response, or null. */
  response: string | null;
  errorMessage: string | null;
  resultTtlSeconds: number;
  /** A `records` cargo: its staged per-record results are dropped with this result. */
  isRecords: boolean;
  /** The status the cargo moves to with this result. */
  nextStatus: CargoStatus;
  /** Deliveries to start with this result. */
  channels: DeliveryChannelName[];
  /** What the result used and cost; left out, it used nothing (0 tokens, no cost recorded). */
  usage?: Usage;
}

/**
 * Stores results, creates their deliveries and moves their cargo on, in one transaction, under
 * the batch's lease (a collector that lost it writes nothing: LeaseLostError). Only cargo that
 * actually move from batched/processing get a result and deliveries, so a result stored twice (a
 * re-run after a crash, two collectors) never creates a second delivery. Resolves to how many
 * cargo moved to each status.
 */
export async function storeResults(
  database: Database,
  lease: BatchLease,
  results: NewResult[],
  now: number,
): Promise<Map<CargoStatus, number>> {
  const movedTo = new Map<CargoStatus, number>();
  if (results.length === 0) return movedTo;
  await database.write.transaction().execute(async (tx) => {
    await assertBatchLease(tx, database.dialect, lease);
    // Cargo id → project id of the cargo that move: the result row keeps it (GET /usage).
    const moved = new Map<string, string>();
    const byStatus = new Map<CargoStatus, string[]>();
    for (const r of results) {
      const ids = byStatus.get(r.nextStatus);
      if (ids) ids.push(r.cargoId);
      else byStatus.set(r.nextStatus, [r.cargoId]);
    }
    for (const [status, ids] of byStatus) {
      for (const part of chunks(ids)) {
        const rows = await tx
          .updateTable('cargo')
          .set({ status, updated_at: now })
          .where('id', 'in', part)
          .where('status', 'in', movableFrom('result'))
          .returning(['id', 'project_id'])
          .execute();
        for (const row of rows) moved.set(row.id, row.project_id);
        if (rows.length > 0) movedTo.set(status, (movedTo.get(status) ?? 0) + rows.length);
      }
    }
    const stored = results.filter((r) => moved.has(r.cargoId));
    for (const part of statementChunks(stored, 15, (r) => (r.response?.length ?? 0) + (r.errorMessage?.length ?? 0))) {
      await tx
        .insertInto('results')
        .values(
          part.map((r) => ({
            cargo_id: r.cargoId,
            success: r.success ? 1 : 0,
            response: r.response,
            error_message: r.errorMessage,
            created_at: now,
            expires_at: now + r.resultTtlSeconds * 1000,
            purged_at: null,
            project_id: moved.get(r.cargoId) ?? null,
            input_tokens: r.usage?.inputTokens ?? 0,
            output_tokens: r.usage?.outputTokens ?? 0,
            cache_creation_input_tokens: r.usage?.cacheCreationTokens ?? 0,
            cache_creation_1h_input_tokens: r.usage?.cacheCreation1hTokens ?? 0,
            cache_read_input_tokens: r.usage?.cacheReadTokens ?? 0,
            cost_usd: r.usage?.costUsd ?? null,
            standard_cost_usd: r.usage?.standardCostUsd ?? null,
          })),
        )
        .onConflict((oc) => oc.column('cargo_id').doNothing())
        .execute();
    }
    await insertDeliveries(tx, deliveriesFor(stored), now);
    const records = stored.filter((r) => r.isRecords).map((r) => r.cargoId);
    for (const part of chunks(records)) {
      await tx.deleteFrom('record_results').where('cargo_id', 'in', part).execute();
    }
  });
  return movedTo;
}

function deliveriesFor(results: NewResult[]): DeliveryRequest[] {
  return results.flatMap((r) => r.channels.map((channel) => ({ cargoId: r.cargoId, channel, trigger: 'result' })));
}
