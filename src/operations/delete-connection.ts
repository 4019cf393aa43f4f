/**
 * Deletes a connection; its pending deliveries fail at once with connection_not_found, in the same
 * transaction (one whose attempt is in flight fails as soon as that attempt ends, unless it delivered).
 */
import { deleteConnection as removeConnection } from '../store/admin/connections.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function deleteConnection(
  deps: Pick<OperationDeps, 'database' | 'clock'>,
  input: { connectionId: string },
): Promise<Result<{ connectionId: string }>> {
  const deleted = await removeConnection(deps.database, input.connectionId, deps.clock.now());
  return deleted
    ? succeed({ connectionId: input.connectionId })
    : refuse(refusals.connectionNotFound(input.connectionId));
}
