/** Reading one of a project's cargo with its result, for tracking and the mailbox. */
import type { CargoStatus } from '../../domain/lifecycle.js';
import type { Database } from '../database.js';
import { metadataOf } from '../metadata.js';

/** What tracking and the mailbox need: the cargo's state and, when there is one, its result. */
export interface CargoView {
  id: string;
  status: CargoStatus;
  metadata: string | null;
  createdAt: number;
  updatedAt: number;
  /** The cargo asked for a webhook or object delivery. */
  hasDeliveries: boolean;
  /** Why the last try to submit the cargo's batch failed, while the batch waits to try again. */
  submitError: string | null;
  result: {
    success: boolean;
    response: string | null;
    errorMessage: string | null;
    createdAt: number;
    purged: boolean;
  } | null;
}

/**
 * One of a project's cargo (none of another project's) with its request, its compat batch link,
 * its result and its batch joined: each reader selects the columns it shows.
 */
export function projectCargoQuery(database: Database, projectId: string, cargoId: string) {
  return database.read
    .selectFrom('cargo as c')
    .innerJoin('cargo_requests as q', 'q.cargo_id', 'c.id')
    .leftJoin('compat_cargo as m', 'm.cargo_id', 'c.id')
    .leftJoin('results as r', 'r.cargo_id', 'c.id')
    .leftJoin('batches as b', 'b.id', 'c.batch_id')
    .where('c.id', '=', cargoId)
    .where('c.project_id', '=', projectId);
}

/** Why the cargo's batch last failed to submit, while it waits to try again, else null. */
export function submitErrorOf(batchStatus: string | null, lastError: string | null): string | null {
  // A submitted batch's job id replaces the error of the tries before it (markBatchSubmitted).
  return batchStatus === 'submitting' ? lastError : null;
}

/** A project's cargo with its result, or undefined (another project's cargo is not found either). */
export async function findCargoForProject(
  database: Database,
  projectId: string,
  cargoId: string,
): Promise<CargoView | undefined> {
  const row = await projectCargoQuery(database, projectId, cargoId)
    .select([
      'c.id',
      'c.status',
      metadataOf,
      'c.created_at',
      'c.updated_at',
      'c.callback_url',
      'c.callback',
      'r.success',
      'r.response',
      'r.error_message',
      'r.created_at as result_created_at',
      'r.purged_at',
      'b.status as batch_status',
      'b.last_error as batch_error',
    ])
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    status: row.status,
    metadata: row.metadata,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    hasDeliveries: row.callback_url !== null || row.callback !== null,
    submitError: submitErrorOf(row.batch_status, row.batch_error),
    result:
      row.success === null || row.result_created_at === null
        ? null
        : {
            success: row.success === 1,
            response: row.response,
            errorMessage: row.error_message,
            createdAt: row.result_created_at,
            purged: row.purged_at !== null,
          },
  };
}
