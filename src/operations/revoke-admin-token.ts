/**
 * Revokes an admin token. It is kept (its prefix still names it) and every API process refuses it
 * from its next request on: the admin scope looks tokens up on every request.
 */
import { type AdminToken, revokeAdminToken as updateAdminToken } from '../store/admin/admin-tokens.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function revokeAdminToken(deps: OperationDeps, input: { id: string }): Promise<Result<AdminToken>> {
  const revoked = await updateAdminToken(deps.database, input.id, deps.clock.now());
  return revoked ? succeed(revoked) : refuse(refusals.adminTokenNotFound(input.id));
}
