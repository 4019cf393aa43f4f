/**
 * A connection in the JSON shape the admin API answers and `barge connection … --json` prints:
 * one definition for both. Never its static credentials, only that it has some.
 */
import { isoTime } from '../domain/clock.js';
import { nextCheckAt } from '../domain/connections.js';
import type { Connection } from './show-connection.js';

const maybeIso = (ms: number | null) => (ms === null ? null : isoTime(ms));

export function connectionView(c: Connection, projectSlug: string, now: number) {
  return {
    id: c.id,
    project: projectSlug,
    kind: c.roleArn === null ? ('static_credentials' as const) : ('assume_role' as const),
    role_arn: c.roleArn,
    external_id: c.externalId,
    endpoint_url: c.endpointUrl,
    region: c.region,
    allowed_targets: c.allowedTargets,
    status: c.status,
    last_failure_reason: c.lastFailureReason,
    last_failed_at: maybeIso(c.lastFailedAt),
    last_check_at: maybeIso(c.lastCheckAt),
    /** When the next capability check that writes or sends may run; null: now. */
    next_check_at: maybeIso(nextCheckAt(c.lastCheckAt, now)),
    created_at: isoTime(c.createdAt),
    updated_at: isoTime(c.updatedAt),
  };
}
