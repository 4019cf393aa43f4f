/**
 * Where a provider-compatible batch stands, read when someone asks (GET of a batch, a list): its
 * counts are on its row (a trigger on `results` moves them, migration 025); once none is
 * processing, the batch ends and, for an OpenAI batch, its output and error files are written
 * first and made ready in the transaction that ends it (under the batch's lease, so two API
 * processes never make them twice). A crash while the files are written leaves the batch open,
 * and the next read writes them again (the sweeper deletes the unfinished ones).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../domain/clock.js';
import {
  type CompatBatchRow,
  type CompatCounts,
  claimCompatBatch,
  compatCountsOf,
  endCompatBatch,
  findCompatBatch,
  releaseCompatBatch,
} from '../store/compat/batches.js';
import { type CompatRequestRow, compatRequestPage } from '../store/compat/requests.js';
import type { Database } from '../store/database.js';
import { nextTurn, TimeSlices } from '../turns.js';
import { newCompatId } from './ids.js';
import { CompatFileWriter } from './openai/file-writer.js';
import { outputLineOf } from './openai/output-lines.js';
import { outcomeOf } from './request-outcome.js';

export interface ProgressDeps {
  database: Database;
  clock: Clock;
  /** The lease on a batch whose files are being made, and on each file. */
  leaseMs: number;
  log: { warn: (obj: object, msg: string) => void };
}

/** A batch as its views need it: the row (ended or not) and its counts now. */
export interface BatchProgress {
  row: CompatBatchRow;
  counts: CompatCounts;
}

/** The batch now; an open one whose requests are all terminal is ended (OpenAI: its files made). */
export async function batchProgress(deps: ProgressDeps, row: CompatBatchRow): Promise<BatchProgress> {
  const counts = compatCountsOf(row);
  if (row.state !== 'open' || counts.processing > 0) return { row, counts };
  const endedAt = row.last_result_at ?? deps.clock.now();
  if (row.api === 'anthropic') {
    await endCompatBatch(deps.database, { batchId: row.id, endedAt });
  } else {
    const made = await makeFilesAndEnd(deps, row, endedAt);
    if (!made) return { row, counts };
  }
  const ended = await findCompatBatch(deps.database, { projectId: row.project_id, api: row.api, id: row.id });
  return ended ? { row: ended, counts: compatCountsOf(ended) } : { row, counts };
}

/**
 * Writes an OpenAI batch's output and error files and ends it with them, under its lease; false
 * when another holder has the lease (the batch stays open for now).
 */
async function makeFilesAndEnd(deps: ProgressDeps, row: CompatBatchRow, endedAt: number): Promise<boolean> {
  const me = randomUUID();
  const now = deps.clock.now();
  if (!(await claimCompatBatch(deps.database, { batchId: row.id, lockedBy: me, now, until: now + deps.leaseMs }))) {
    return false;
  }
  const writer = (kind: 'output' | 'error') =>
    new CompatFileWriter(deps, {
      id: newCompatId('file', now),
      projectId: row.project_id,
      purpose: 'batch_output',
      filename: `${row.id}_${kind}.jsonl`,
    });
  const files = { output: writer('output'), error: writer('error') };
  try {
    const slices = new TimeSlices();
    for await (const request of requestsOf(deps.database, row.id)) {
      const outcome = outcomeOf(request);
      if (outcome.type === 'processing') throw new Error(`request ${request.position} of ${row.id} is unfinished`);
      const { file, line } = outputLineOf(
        { cargoId: request.cargoId, customId: request.customId, resultAt: request.resultAt ?? endedAt },
        outcome,
      );
      await files[file].write(Buffer.from(`${line}\n`));
      if (slices.due) await slices.pause();
    }
    const written = async (file: CompatFileWriter) =>
      file.bytes > 0 ? { id: file.file.id, bytes: await file.flushAll() } : null;
    const ended = await endCompatBatch(deps.database, {
      batchId: row.id,
      endedAt,
      files: {
        projectId: row.project_id,
        lockedBy: me,
        output: await written(files.output),
        error: await written(files.error),
      },
    });
    if (!ended) throw new Error(`batch ${row.id} was ended by another holder`);
    return true;
  } catch (err) {
    deps.log.warn({ err, batch: row.id }, 'could not make the files of a batch; the next read tries again');
    for (const file of Object.values(files)) await file.abandon();
    await releaseCompatBatch(deps.database, row.id, me).catch(() => {});
    return false;
  }
}

/** Requests read a page at a time: a page of results is at most this many rows. */
const PAGE_ROWS = 200;

/** A batch's requests with their results, in submission order, a page at a time with a turn between pages. */
export async function* requestsOf(database: Database, batchId: string): AsyncGenerator<CompatRequestRow> {
  let after = -1;
  for (;;) {
    const page = await compatRequestPage(database, { batchId, afterPosition: after, size: PAGE_ROWS });
    yield* page;
    if (page.length < PAGE_ROWS) return;
    after = (page[page.length - 1] as CompatRequestRow).position;
    await nextTurn();
  }
}
