/**
 * A bulk recovery and its dry-run count in the JSON shape the admin API answers and `barge cargo
 * redeliver --project --json` prints: one definition for both. `state` is the recovery's own,
 * `status` the cargo's it redelivers.
 */
import { isoTime } from '../domain/clock.js';
import type { RecoverableCargoStatus, RecoveryStatus } from '../domain/lifecycle.js';
import type { RecoveryCount } from './count-recovery.js';
import type { Recovery } from './create-recovery.js';

export interface RecoveryView {
  id: string;
  project: string;
  state: RecoveryStatus;
  status: RecoverableCargoStatus;
  since: string;
  until: string;
  total: number;
  done: number;
  redelivered: number;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export function recoveryView(r: Recovery, projectSlug: string): RecoveryView {
  return {
    id: r.id,
    project: projectSlug,
    state: r.status,
    status: r.cargoStatus,
    since: isoTime(r.since),
    until: isoTime(r.until),
    total: r.total,
    done: r.done,
    redelivered: r.redelivered,
    created_at: isoTime(r.createdAt),
    updated_at: isoTime(r.updatedAt),
    finished_at: r.finishedAt === null ? null : isoTime(r.finishedAt),
  };
}

export function recoveryCountView(c: RecoveryCount) {
  return { status: c.status, since: isoTime(c.since), until: isoTime(c.until), count: c.count };
}
