/** Shows one connection of any project, with its project's slug: its external id, status and last failure. */
import { type Connection, findConnectionWithProject } from '../store/admin/connections.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function showConnection(
  deps: Pick<OperationDeps, 'database'>,
  input: { connectionId: string },
): Promise<Result<{ connection: Connection; projectSlug: string }>> {
  const found = await findConnectionWithProject(deps.database, input.connectionId);
  return found ? succeed(found) : refuse(refusals.connectionNotFound(input.connectionId));
}
