/** `connection check` for bucket targets: assume the role and write one marked object. */
import type { Clock } from '../../domain/clock.js';
import { VERIFICATION_BODY } from '../../domain/object-body.js';
import { verificationObjectKey } from '../../domain/object-target.js';
import { applyConnectionEffect, type Connection } from '../../store/admin/connections.js';
import type { Database } from '../../store/database.js';
import { accessResult, type CapabilityResult, underCheckSlot } from '../capability.js';
import type { BucketWriter } from './bucket-writer.js';

export type { CapabilityResult } from '../capability.js';

export interface CheckReport {
  connectionId: string;
  bucket: string;
  /** The verification object written, or null when only the role was probed. */
  key: string | null;
  ok: boolean;
  capabilities: { assumeRole: CapabilityResult; putObject: CapabilityResult; encryptionKey: CapabilityResult };
}

export interface CheckDeps {
  database: Database;
  clock: Clock;
  writer: BucketWriter;
}

/**
 * The capability check of a connection (document 6.3, rule 9): really assumes the role and writes
 * `{key_prefix}svc-verify.json` (later checks overwrite it), reporting each capability on its own.
 * A check that writes is limited to one per minute per connection, across processes (one that
 * could not assume the role wrote nothing and does not count); a role-only probe writes nothing
 * and is not limited. A passing full check ends an incident.
 */
export async function checkConnection(
  deps: CheckDeps,
  input: { connection: Connection; bucket: string; keyPrefix: string; roleOnly: boolean },
): Promise<CheckReport | { refused: true; waitMs: number }> {
  const { connection, bucket, keyPrefix } = input;
  if (input.roleOnly) {
    const access = await deps.writer.probeAccess({ connection, bucket, keyPrefix });
    const assumeRole = accessResult(connection, access);
    const skipped = { status: 'skipped' as const, detail: 'not probed (--role-only)' };
    return report(connection, bucket, null, { assumeRole, putObject: skipped, encryptionKey: skipped });
  }

  return underCheckSlot(deps.database, { connectionId: connection.id, now: deps.clock.now() }, async () => {
    const key = verificationObjectKey(keyPrefix);
    const written = await deps.writer.write({
      connection,
      bucket,
      keyPrefix,
      key,
      body: VERIFICATION_BODY,
      metadata: {},
    });
    let capabilities: CheckReport['capabilities'];
    if (written.ok) {
      capabilities = {
        assumeRole: accessResult(connection, { ok: true }),
        putObject: { status: 'ok', detail: `wrote ${key} in ${bucket} (region ${written.region})` },
        encryptionKey: encryptionResult(written.encryption, written.kmsKeyId),
      };
    } else if (written.stage === 'access') {
      const skipped = { status: 'skipped' as const, detail: 'not probed: no access to the bucket' };
      capabilities = {
        assumeRole: accessResult(connection, { ok: false, detail: `${written.errorClass}: ${written.detail}` }),
        putObject: skipped,
        encryptionKey: skipped,
      };
    } else {
      const kms = written.errorClass === 'target_misconfigured';
      capabilities = {
        assumeRole: accessResult(connection, { ok: true }),
        putObject: { status: 'failed', detail: `${written.errorClass}: ${written.detail}` },
        encryptionKey: kms
          ? { status: 'failed', detail: `${written.errorClass}: ${written.detail}` }
          : { status: 'skipped', detail: 'not probed: the write failed for another reason' },
      };
    }
    const result = report(connection, bucket, key, capabilities);
    if (result.ok)
      await applyConnectionEffect(deps.database, { connectionId: connection.id, to: 'active' }, deps.clock.now());
    return { report: result, wroteNothing: !written.ok && written.stage === 'access' };
  });
}

function report(
  connection: Connection,
  bucket: string,
  key: string | null,
  capabilities: CheckReport['capabilities'],
): CheckReport {
  const ok = Object.values(capabilities).every((c) => c.status !== 'failed');
  return { connectionId: connection.id, bucket, key, ok, capabilities };
}

function encryptionResult(algorithm: string | null, kmsKeyId: string | null): CapabilityResult {
  if (algorithm?.startsWith('aws:kms')) {
    return { status: 'ok', detail: `the object was encrypted with KMS key ${kmsKeyId ?? '(not reported)'}` };
  }
  if (algorithm) return { status: 'not_used', detail: `the bucket encrypts with ${algorithm}: no KMS key needed` };
  return { status: 'not_used', detail: 'the store reported no KMS encryption' };
}
