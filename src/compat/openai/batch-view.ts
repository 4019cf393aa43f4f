/** A project's OpenAI batch as the routes answer it: found (404 otherwise), brought up to date (its files made once it ended), shaped. */
import type { FastifyRequest } from 'fastify';
import { authOf } from '../../http/auth.js';
import { type CompatBatchRow, findCompatBatch } from '../../store/compat/batches.js';
import { batchProgress } from '../batch-progress.js';
import { type CompatDeps, progressDeps } from '../deps.js';
import { compatErrors } from '../error-shapes.js';
import { isCompatId } from '../ids.js';
import { CHAT_COMPLETIONS } from './chat-request.js';
import { type BatchError, batchObjectOf } from './objects.js';

export async function findBatch(deps: CompatDeps, request: FastifyRequest, id: string): Promise<CompatBatchRow> {
  const row = isCompatId('batch', id)
    ? await findCompatBatch(deps.database, { projectId: authOf(request).projectId, api: 'openai', id })
    : undefined;
  if (!row) throw compatErrors.batchNotFound(id);
  return row;
}

export async function batchView(deps: CompatDeps, request: FastifyRequest, found: CompatBatchRow) {
  const { row, counts } = await batchProgress(progressDeps(deps, request.log), found);
  return batchObjectOf(
    {
      id: row.id,
      state: row.state === 'creating' ? 'open' : row.state,
      inputFileId: row.input_file_id ?? '',
      createdAt: Number(row.created_at),
      inProgressAt: row.in_progress_at === null ? null : Number(row.in_progress_at),
      cancelRequestedAt: row.cancel_requested_at === null ? null : Number(row.cancel_requested_at),
      endedAt: row.ended_at === null ? null : Number(row.ended_at),
      failedAt: row.failed_at === null ? null : Number(row.failed_at),
      counts: { total: row.request_count, completed: counts.succeeded, failed: counts.errored },
      metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, string>),
      errors: row.errors === null ? null : (JSON.parse(row.errors) as BatchError[]),
      outputFileId: row.output_file_id,
      errorFileId: row.error_file_id,
    },
    CHAT_COMPLETIONS,
  );
}
