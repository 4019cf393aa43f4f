/** Forming a batch: pending cargo of one group, round robin across projects, move into a new batch in one transaction. */
import { sql, type Transaction } from 'kysely';
import { movableFrom } from '../../domain/lifecycle.js';
import { chunks } from '../chunks.js';
import type { Database } from '../database.js';
import { assertBatchLease, type BatchLease, LeaseLostError } from '../leases.js';
import type { Schema } from '../schema.js';
import { pendingProjects } from './pending-groups.js';

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
 * Moves pending cargo of one group into a new batch, taken round robin across projects (each
 * project's oldest first), in one transaction: no cargo can end up in two batches. On PostgreSQL
 * the candidate rows are locked with SKIP LOCKED, so several workers form disjoint batches at
 * once; SQLite has a single writer, and its transaction holds the write lock from the start
 * (BEGIN IMMEDIATE), so the rows read are the rows moved.
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
    await moveIntoBatch(tx, chosen.ids, input);
    return { batchId: input.batchId, cargoCount: chosen.ids.length, requestCount: chosen.requests };
  });
}

/**
 * Takes a leased batch's contents again, in one transaction: its cargo go back to pending and the
 * batch takes the group's pending cargo round robin across projects, as forming does, so cargo of
 * another project that arrived while it waited for its provider ride in it. Only for a batch no
 * job can hold (no create whose answer was lost, nothing uploaded): the caller checks. False when
 * the lease was lost (nothing changed). Each project's oldest come first, so a batch that takes
 * nothing new keeps what it had.
 */
export async function refillBatch(
  database: Database,
  lease: BatchLease,
  input: Omit<FormBatchInput, 'batchId' | 'onlyIfFull'>,
): Promise<boolean> {
  return database.write
    .transaction()
    .execute(async (tx) => {
      await assertBatchLease(tx, database.dialect, lease);
      await tx
        .updateTable('cargo')
        .set({ status: 'pending', batch_id: null, updated_at: input.now })
        .where('batch_id', '=', lease.batchId)
        .where('status', 'in', movableFrom('refill'))
        .execute();
      const group = { ...input, batchId: lease.batchId, onlyIfFull: false };
      const chosen = chooseCargo(await selectCandidates(tx, database.dialect, group), group);
      if (chosen) await moveIntoBatch(tx, chosen.ids, group);
      await tx
        .updateTable('batches')
        .set({
          cargo_count: chosen?.ids.length ?? 0,
          request_count: chosen?.requests ?? 0,
          request_bytes: chosen?.bytes ?? 0,
          updated_at: input.now,
        })
        .where('id', '=', lease.batchId)
        .execute();
      return true;
    })
    .catch((err: unknown) => {
      if (err instanceof LeaseLostError) return false;
      throw err;
    });
}

async function moveIntoBatch(tx: Transaction<Schema>, ids: string[], input: FormBatchInput): Promise<void> {
  for (const part of chunks(ids)) {
    await tx
      .updateTable('cargo')
      .set({ status: 'batched', batch_id: input.batchId, updated_at: input.now })
      .where('id', 'in', part)
      .where('status', 'in', movableFrom('batch'))
      .execute();
  }
}

interface Candidate {
  id: string;
  request_count: number;
  request_bytes: number;
}

/**
 * Projects a statement reads its shares for: each is a part of one compound SELECT, and SQLite
 * allows at most 500 parts.
 */
const PROJECTS_PER_STATEMENT = 400;

/**
 * The group's pending cargo in the order a batch takes them: round robin across projects, each
 * project's oldest first, the project whose oldest cargo waited longest first in each turn (a
 * records cargo is one turn). So a project's backlog never pushes another project's cargo out of
 * the next batch. At most maxRequests of them (locked, on PostgreSQL).
 *
 * Each project's share is read from the cargo_pending_by_project index, in rounds: a project with
 * fewer pending than its share leaves the rest to the others in the next round. What is read is
 * bounded by maxRequests and the number of projects with pending cargo in the group. A round is
 * one statement for every project (a range each): on a SQLite file every statement is a trip to
 * the write thread, which the forming transaction holds meanwhile.
 */
async function selectCandidates(
  tx: Transaction<Schema>,
  dialect: Database['dialect'],
  input: FormBatchInput,
): Promise<Candidate[]> {
  const projects = (await pendingProjects(tx, input)).slice(0, input.maxRequests);
  const taken = new Map<string, Candidate[]>(projects.map((p) => [p.projectId, []]));
  let open = projects.map((p) => p.projectId);
  let wanted = input.maxRequests;
  const chosen = new Set<string>();
  while (open.length > 0 && wanted > 0) {
    const share = Math.ceil(wanted / open.length);
    const stillOpen: string[] = [];
    for (const part of chunks(open, PROJECTS_PER_STATEMENT)) {
      // Each part says whose share it is by its place; UNION ALL appends the parts in order, each
      // in its own order, on both databases.
      const shares = part.map((projectId, place) =>
        tx
          .selectFrom(
            tx
              .selectFrom('cargo')
              .select(['id', 'request_count', 'request_bytes', sql.lit(place).as('place')])
              .where('status', '=', 'pending')
              .where('provider', '=', input.provider)
              .where('provider_model', '=', input.providerModel)
              .where('project_id', '=', projectId)
              .orderBy('created_at')
              .orderBy('id')
              .limit(share)
              .offset((taken.get(projectId) as Candidate[]).length)
              .$if(dialect === 'postgres', (qb) => qb.forUpdate().skipLocked())
              .as('share'),
          )
          .selectAll(),
      );
      const rows = await shares
        .slice(1)
        .reduce((union, next) => union.unionAll(next), shares[0] as (typeof shares)[0])
        .execute();
      const reads = part.map((projectId) => ({ projectId, rows: 0, fresh: 0 }));
      for (const row of rows) {
        const read = reads[Number(row.place)] as (typeof reads)[number];
        read.rows++;
        // On PostgreSQL each round reads a new snapshot: a cargo committed meanwhile ahead of the
        // offset shifts the range, and a row already taken comes again. It is taken once.
        if (chosen.has(row.id)) continue;
        chosen.add(row.id);
        read.fresh++;
        (taken.get(read.projectId) as Candidate[]).push(row);
        wanted--;
      }
      // A project that filled its share may have more; one that gave nothing new has not.
      for (const read of reads) if (read.rows === share && read.fresh > 0) stillOpen.push(read.projectId);
    }
    open = stillOpen;
  }
  const turns: Candidate[] = [];
  for (let turn = 0; turns.length < input.maxRequests; turn++) {
    const before = turns.length;
    for (const project of projects) {
      const candidate = taken.get(project.projectId)?.[turn];
      if (candidate) turns.push(candidate);
    }
    if (turns.length === before) break;
  }
  return turns;
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
