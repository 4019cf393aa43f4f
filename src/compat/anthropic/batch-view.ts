/** A project's Message Batch as the routes answer it: found (404 otherwise), brought up to date, and shaped. */
import type { FastifyRequest } from 'fastify';
import { authOf } from '../../http/auth.js';
import { type CompatBatchRow, findCompatBatch } from '../../store/compat/batches.js';
import { batchProgress } from '../batch-progress.js';
import { type CompatDeps, progressDeps, publicBaseOf } from '../deps.js';
import { compatErrors } from '../error-shapes.js';
import { isCompatId } from '../ids.js';
import { type MessageBatch, messageBatchOf } from './message-batch.js';

/** The project's batch of this id, or the 404. */
export async function findMessageBatch(deps: CompatDeps, request: FastifyRequest, id: string): Promise<CompatBatchRow> {
  const row = isCompatId('messageBatch', id)
    ? await findCompatBatch(deps.database, { projectId: authOf(request).projectId, api: 'anthropic', id })
    : undefined;
  if (!row) throw compatErrors.messageBatchNotFound(id);
  return row;
}

/** The MessageBatch of a row, counted now (and ended when its last request ended). */
export async function messageBatchView(
  deps: CompatDeps,
  request: FastifyRequest,
  row: CompatBatchRow,
): Promise<MessageBatch> {
  const { row: now, counts } = await batchProgress(progressDeps(deps, request.log), row);
  return messageBatchOf(
    {
      id: now.id,
      createdAt: now.created_at,
      endedAt: now.state === 'ended' ? now.ended_at : null,
      cancelRequestedAt: now.cancel_requested_at,
      counts,
    },
    publicBaseOf(request, deps),
  );
}
