/** What every target kind's capability check reports of a capability, the assume-role one included. */
import type { Connection } from '../store/admin/connections.js';

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
