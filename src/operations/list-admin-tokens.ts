/** Lists every admin token: its prefix, scope and standing, never the token itself. */
import { type AdminToken, listAdminTokens as readAdminTokens } from '../store/admin/admin-tokens.js';
import { type OperationDeps, type Result, succeed } from './operation.js';

export type { AdminToken };

export async function listAdminTokens(deps: Pick<OperationDeps, 'database'>): Promise<Result<AdminToken[]>> {
  return succeed(await readAdminTokens(deps.database));
}
