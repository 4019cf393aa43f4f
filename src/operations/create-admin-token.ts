/**
 * Creates an admin token: a non-empty name and, if given, the one project it sees (else every
 * project). The full token comes back this once; only its hash is stored.
 */
import { type AdminToken, createAdminToken as insertAdminToken } from '../store/admin/admin-tokens.js';
import { findProjectBySlug } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export interface CreatedAdminToken {
  adminToken: AdminToken;
  /** The full token: shown once, never stored. */
  token: string;
}

export async function createAdminToken(
  deps: OperationDeps,
  input: { name: string; slug?: string },
): Promise<Result<CreatedAdminToken>> {
  if (input.name.trim() === '') return refuse(refusals.emptyTokenName(input.name));
  let project: { id: string; slug: string } | null = null;
  if (input.slug !== undefined) {
    const found = await findProjectBySlug(deps.database, input.slug);
    if (!found) return refuse(refusals.projectNotFound(input.slug));
    project = { id: found.id, slug: found.slug };
  }
  return succeed(await insertAdminToken(deps.database, { name: input.name, project, now: deps.clock.now() }));
}
