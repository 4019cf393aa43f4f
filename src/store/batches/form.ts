/** Forming a batch: the oldest pending cargo of one group move into a new batch, in one transaction. */
import type { Transaction } from 'kysely';
import { movableFrom } from '../../domain/lifecycle.js';
import { chunks } from '../chunks.js';
import type { Database } from '../database.js';
import type { Schema } from '../schema.js';

export interface FormBatchInput {
  batchId: string;
  provider: string;
  providerModel: string;
  maxRequests: number;
  maxBytes: number;
  /** Form the batch only if it reaches maxRequests or maxBytes (the group is not due by time). */
  onlyIfFull: boolean;
  now: number;
}

export interface FormedBatch {
  batchId: string;
  cargoCount: number;
  requestCount: number;
}

/**
 * Moves the oldest pending cargo of one group into a new batch, in one transaction: no cargo can
 * end up in two batches. On PostgreSQL the candidate rows are locked with SKIP LOCKED, so several
 * workers form disjoint batches at once; SQLite has a single writer, and its transaction holds the
 * write lock from the start (BEGIN IMMEDIATE), so the rows read are the rows moved.
 */
export async function formBatch(database: Database, input: FormBatchInput): Promise<FormedBatch | null> {
  return database.write.transaction().execute(async (tx) => {
    const chosen = chooseCargo(await selectCandidates(tx, database.dialect, input), input);
    if (!chosen) return null;
    await tx
      .insertInto('batches')
      .values({
        id: input.batchId,
        provider: input.provider,
        provider_model: input.providerModel,
        status: 'submitting',
        job_id: null,
        cargo_count: chosen.ids.length,
        request_count: chosen.requests,
        padding_count: 0,
        request_bytes: chosen.bytes,
        created_at: input.now,
        submitted_at: null,
        deadline_at: null,
        next_check_at: input.now,
        canceled_at: null,
        ended_at: null,
        end_reason: null,
        locked_by: null,
        locked_until: null,
        last_error: null,
        updated_at: input.now,
      })
      .execute();
    for (const part of chunks(chosen.ids)) {
      await tx
        .updateTable('cargo')
        .set({ status: 'batched', batch_id: input.batchId, updated_at: input.now })
        .where('id', 'in', part)
        .where('status', 'in', movableFrom('batch'))
        .execute();
    }
    return { batchId: input.batchId, cargoCount: chosen.ids.length, requestCount: chosen.requests };
  });
}

interface Candidate {
  id: string;
  request_count: number;
  request_bytes: number;
}

/** The group's oldest pending cargo, up to maxRequests of them (locked, on PostgreSQL). */
function selectCandidates(
  tx: Transaction<Schema>,
  dialect: Database['dialect'],
  input: FormBatchInput,
): Promise<Candidate[]> {
  return tx
    .selectFrom('cargo')
    .select(['id', 'request_count', 'request_bytes'])
    .where('status', '=', 'pending')
    .where('provider', '=', input.provider)
    .where('provider_model', '=', input.providerModel)
    .orderBy('created_at')
    .orderBy('id')
    .limit(input.maxRequests)
    .$if(dialect === 'postgres', (qb) => qb.forUpdate().skipLocked())
    .execute();
}

/** The candidates that fit one batch; null if none do, or the batch must be full and is not. */
function chooseCargo(
  candidates: Candidate[],
  input: FormBatchInput,
): { ids: string[]; requests: number; bytes: number } | null {
  const ids: string[] = [];
  let requests = 0;
  let bytes = 0;
  let full = false;
  for (const c of candidates) {
    if (requests + c.request_count > input.maxRequests || bytes + c.request_bytes > input.maxBytes) {
      full = true;
      break;
    }
    ids.push(c.id);
    requests += c.request_count;
    bytes += c.request_bytes;
  }
  full ||= requests >= input.maxRequests;
  if (ids.length === 0 || (input.onlyIfFull && !full)) return null;
  return { ids, requests, bytes };
}
