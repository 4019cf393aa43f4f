/**
 * Shows one connection, with its project's slug: its external id, status and last failure, and
 * the policies its customer puts on the role (domain/connection-policies.ts), the permission
 * policy's bucket statements for `keyPrefix` (default DEFAULT_KEY_PREFIX). Of any project, or of
 * the project named only (another project's connection is not found).
 */
import type { Config } from '../config.js';
import { type ConnectionPolicies, connectionPolicies } from '../domain/connection-policies.js';
import { DEFAULT_KEY_PREFIX, keyPrefixProblem } from '../domain/object-target.js';
import { type Connection, findConnectionWithProject } from '../store/admin/connections.js';
import { findProjectBySlug } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export type { Connection, ConnectionPolicies };

export interface ShownConnection {
  connection: Connection;
  projectSlug: string;
  /** Null for static credentials (no role). */
  policies: ConnectionPolicies | null;
}

export async function showConnection(
  deps: Pick<OperationDeps, 'database'> & { config: { objectStore: Pick<Config['objectStore'], 'principalArn'> } },
  input: { connectionId: string; slug?: string; keyPrefix?: string },
): Promise<Result<ShownConnection>> {
  const keyPrefix = input.keyPrefix ?? DEFAULT_KEY_PREFIX;
  const problem = keyPrefixProblem(keyPrefix);
  if (problem) return refuse(refusals.invalidKeyPrefix(keyPrefix, problem));
  const found = await connectionOf(deps, input);
  if (!found.ok) return found;
  const policies = connectionPolicies(found.value.connection, deps.config.objectStore.principalArn, keyPrefix);
  return succeed({ ...found.value, policies });
}

/** A connection with its project's slug: of any project, or of the project named (the project must exist). */
export async function connectionOf(
  deps: Pick<OperationDeps, 'database'>,
  input: { connectionId: string; slug?: string },
): Promise<Result<{ connection: Connection; projectSlug: string }>> {
  if (input.slug !== undefined && !(await findProjectBySlug(deps.database, input.slug))) {
    return refuse(refusals.projectNotFound(input.slug));
  }
  const found = await findConnectionWithProject(deps.database, input.connectionId);
  if (!found || (input.slug !== undefined && found.projectSlug !== input.slug)) {
    return refuse(refusals.connectionNotFound(input.connectionId));
  }
  return succeed(found);
}
