/** Deletes a connection; deliveries still naming it then fail with connection_not_found. */
import { deleteConnection as removeConnection } from '../store/admin/connections.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function deleteConnection(
  deps: Pick<OperationDeps, 'database'>,
  input: { connectionId: string },
): Promise<Result<{ connectionId: string }>> {
  const deleted = await removeConnection(deps.database, input.connectionId);
  return deleted
    ? succeed({ connectionId: input.connectionId })
    : refuse(refusals.connectionNotFound(input.connectionId));
}
