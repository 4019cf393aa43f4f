/** What every target kind's capability check reports of a capability, the assume-role one included. */
import { type Connection, claimCheckSlot, releaseCheckSlot } from '../store/admin/connections.js';
import type { Database } from '../store/database.js';

/** What a capability check reports of each capability (every target kind's check). */
export type CapabilityStatus = 'ok' | 'failed' | 'skipped' | 'not_used';

export interface CapabilityResult {
  status: CapabilityStatus;
  detail: string;
}

/** The assume-role capability of any target's check: skipped for static credentials. */
export function accessResult(
  connection: Connection,
  access: { ok: true } | { ok: false; detail: string },
): CapabilityResult {
  if (connection.roleArn === null) {
    return access.ok
      ? { status: 'skipped', detail: 'static credentials: no role to assume' }
      : { status: 'failed', detail: access.detail };
  }
  return access.ok
    ? { status: 'ok', detail: `assumed ${connection.roleArn} with the external id` }
    : { status: 'failed', detail: access.detail };
}

/**
 * Runs a check that writes an object or sends a message under the connection's check slot (one
 * per CHECK_INTERVAL_MS, across processes). The limit is there because such a check writes: one
 * that failed before writing anything (the role could not be assumed, `wroteNothing`) gives the
 * slot back, so a fixed trust policy can be checked again at once.
 */
export async function underCheckSlot<Report>(
  database: Database,
  input: { connectionId: string; now: number },
  check: () => Promise<{ report: Report; wroteNothing: boolean }>,
): Promise<Report | { refused: true; waitMs: number }> {
  const slot = await claimCheckSlot(database, { id: input.connectionId, now: input.now });
  if (!slot.granted) return { refused: true, waitMs: slot.waitMs };
  const { report, wroteNothing } = await check();
  if (wroteNothing) {
    await releaseCheckSlot(database, { id: input.connectionId, claimedAt: input.now, previous: slot.previous });
  }
  return report;
}
