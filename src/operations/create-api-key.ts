/**
 * Creates an API key for a project: a non-empty name and, if given, an expiry that is a real
 * ISO 8601 date in the future. The full key comes back this once; only its hash is stored.
 */
import { parseIsoTime } from '../domain/iso-time.js';
import { type ApiKey, createApiKey as insertApiKey } from '../store/admin/api-keys.js';
import { findProjectBySlug, type Project } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export interface CreatedApiKey {
  apiKey: ApiKey;
  /** The full key: shown once, never stored. */
  key: string;
  project: Project;
}

export async function createApiKey(
  deps: OperationDeps,
  input: { slug: string; name: string; expiresAt?: string },
): Promise<Result<CreatedApiKey>> {
  const now = deps.clock.now();
  if (input.name.trim() === '') return refuse(refusals.emptyKeyName(input.name));
  let expiresAt: number | null = null;
  if (input.expiresAt !== undefined) {
    const parsed = parseExpiry(input.expiresAt, now);
    if ('problem' in parsed) return refuse(refusals.invalidExpiry(input.expiresAt, parsed.problem));
    expiresAt = parsed.ms;
  }
  const project = await findProjectBySlug(deps.database, input.slug);
  if (!project) return refuse(refusals.projectNotFound(input.slug));
  const { apiKey, key } = await insertApiKey(deps.database, {
    projectId: project.id,
    name: input.name,
    expiresAt,
    now,
  });
  return succeed({ apiKey, key, project });
}

/**
 * An expiry as epoch milliseconds: an ISO 8601 time (domain/iso-time.ts) that lies after `now`.
 */
export function parseExpiry(raw: string, now: number): { ms: number } | { problem: string } {
  const ms = parseIsoTime(raw);
  if (ms === null) return { problem: 'use an ISO 8601 date, e.g. 2027-01-31T00:00:00Z' };
  if (ms <= now) return { problem: 'it is not in the future' };
  return { ms };
}
