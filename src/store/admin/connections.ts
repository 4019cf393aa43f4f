/** Connections (a project's cloud targets and credentials): CRUD, check slots and the effects of deliveries. */
import type { Selectable } from 'kysely';
import { CHECK_INTERVAL_MS } from '../../domain/connections.js';
import type { MailMessage } from '../../mail/mailer.js';
import type { Database } from '../database.js';
import { failDeletedConnectionDeliveries } from '../deliveries/connection-deleted.js';
import { enqueueMail } from '../outbox/enqueue.js';
import type { ConnectionsTable } from '../schema.js';

export type ConnectionRow = Selectable<ConnectionsTable>;

export interface Connection {
  id: string;
  projectId: string;
  roleArn: string | null;
  externalId: string;
  /** Bucket ARNs deliveries may target; null allows any. */
  allowedTargets: string[] | null;
  endpointUrl: string | null;
  region: string | null;
  /** Sealed static credentials; opened only where a request is signed with them. */
  sealedCredentials: string | null;
  status: ConnectionRow['status'];
  lastFailureReason: string | null;
  lastFailedAt: number | null;
  lastCheckAt: number | null;
  createdAt: number;
  updatedAt: number;
}

function toConnection(row: ConnectionRow): Connection {
  return {
    id: row.id,
    projectId: row.project_id,
    roleArn: row.role_arn,
    externalId: row.external_id,
    allowedTargets: row.allowed_targets === null ? null : (JSON.parse(row.allowed_targets) as string[]),
    endpointUrl: row.endpoint_url,
    region: row.region,
    sealedCredentials: row.sealed_credentials,
    status: row.status,
    lastFailureReason: row.last_failure_reason,
    lastFailedAt: row.last_failed_at === null ? null : Number(row.last_failed_at),
    lastCheckAt: row.last_check_at === null ? null : Number(row.last_check_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** What a new connection is made with; the rest starts as a new connection's does (active, never checked). */
export type NewConnection = Pick<
  Connection,
  'id' | 'projectId' | 'roleArn' | 'externalId' | 'allowedTargets' | 'endpointUrl' | 'region' | 'sealedCredentials'
> & { now: number };

export async function insertConnection(database: Database, input: NewConnection): Promise<Connection> {
  const row = await database.write
    .insertInto('connections')
    .values({
      id: input.id,
      project_id: input.projectId,
      role_arn: input.roleArn,
      external_id: input.externalId,
      allowed_targets: input.allowedTargets === null ? null : JSON.stringify(input.allowedTargets),
      endpoint_url: input.endpointUrl,
      region: input.region,
      sealed_credentials: input.sealedCredentials,
      status: 'active',
      last_failure_reason: null,
      last_failed_at: null,
      last_check_at: null,
      created_at: input.now,
      updated_at: input.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toConnection(row);
}

export async function listConnections(database: Database, projectId: string): Promise<Connection[]> {
  const rows = await database.read
    .selectFrom('connections')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toConnection);
}

/** Any project's connection (admin commands). */
export async function findConnection(database: Database, id: string): Promise<Connection | undefined> {
  const row = await database.read.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toConnection(row);
}

/** A connection of this project only: another project's id looks exactly like a missing one. */
export async function findProjectConnection(
  database: Database,
  projectId: string,
  id: string,
): Promise<Connection | undefined> {
  const row = await database.read
    .selectFrom('connections')
    .selectAll()
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return row && toConnection(row);
}

/**
 * Deletes a connection (of `projectId` only, when given) and, in the same transaction, fails its
 * pending deliveries (connection-deleted.ts).
 */
export async function deleteConnection(
  database: Database,
  id: string,
  now: number,
  projectId?: string,
): Promise<boolean> {
  return database.write.transaction().execute(async (tx) => {
    const deleted = await tx
      .deleteFrom('connections')
      .where('id', '=', id)
      .$if(projectId !== undefined, (qb) => qb.where('project_id', '=', projectId as string))
      .returning(['id', 'project_id'])
      .executeTakeFirst();
    if (!deleted) return false;
    await failDeletedConnectionDeliveries(tx, database.dialect, { id, projectId: deleted.project_id }, now);
    return true;
  });
}

/**
 * A change of a connection's standing found by a delivery or a check. `failed` (access denied) is
 * an incident only on the change from active, so of any number of concurrent or later failures
 * exactly one queues the incident mail, in the same transaction as the change (the outbox sends
 * it); the others only refresh the reason and time. `active` ends an incident.
 */
export async function applyConnectionEffect(
  database: Database,
  effect:
    | { connectionId: string; to: 'active' }
    | { connectionId: string; to: 'failed'; reason: string; mail: MailMessage | null },
  now: number,
): Promise<{ changed: boolean; mailQueued: boolean }> {
  if (effect.to === 'active') {
    const row = await database.write
      .updateTable('connections')
      .set({ status: 'active', updated_at: now })
      .where('id', '=', effect.connectionId)
      .where('status', '=', 'failed')
      .returning('id')
      .executeTakeFirst();
    return { changed: row !== undefined, mailQueued: false };
  }
  return database.write.transaction().execute(async (tx) => {
    const changes = { last_failure_reason: effect.reason, last_failed_at: now, updated_at: now };
    const turned = await tx
      .updateTable('connections')
      .set({ status: 'failed', ...changes })
      .where('id', '=', effect.connectionId)
      .where('status', '=', 'active')
      .returning('id')
      .executeTakeFirst();
    if (!turned) {
      await tx.updateTable('connections').set(changes).where('id', '=', effect.connectionId).execute();
      return { changed: false, mailQueued: false };
    }
    if (effect.mail) await enqueueMail(tx, effect.mail, now);
    return { changed: true, mailQueued: effect.mail !== null };
  });
}

/**
 * Takes the connection's capability-check slot: one check per CHECK_INTERVAL_MS, shared by every
 * process through the row itself. Refused with the time left to wait; granted with the time of
 * the check it follows, which releaseCheckSlot puts back. The claim is a compare-and-set on the
 * time read just before, so of two concurrent claims one wins and the other is refused.
 */
export async function claimCheckSlot(
  database: Database,
  input: { id: string; now: number },
): Promise<{ granted: true; previous: number | null } | { granted: false; waitMs: number }> {
  // Read on the write connection, as the claim: right before it, so the wait matches the time
  // that refused it.
  const lastCheckAt = async () => {
    const row = await database.write
      .selectFrom('connections')
      .select('last_check_at')
      .where('id', '=', input.id)
      .executeTakeFirst();
    return row?.last_check_at == null ? null : Number(row.last_check_at);
  };
  const refused = (last: number | null) => ({
    granted: false as const,
    waitMs: Math.max(1, (last ?? input.now) + CHECK_INTERVAL_MS - input.now),
  });
  const previous = await lastCheckAt();
  if (previous !== null && previous > input.now - CHECK_INTERVAL_MS) return refused(previous);
  const claimed = await database.write
    .updateTable('connections')
    .set({ last_check_at: input.now })
    .where('id', '=', input.id)
    .where((eb) => (previous === null ? eb('last_check_at', 'is', null) : eb('last_check_at', '=', previous)))
    .returning('id')
    .executeTakeFirst();
  return claimed ? { granted: true, previous } : refused(await lastCheckAt());
}

/**
 * Gives back a slot claimCheckSlot granted at `claimedAt` (the check wrote and sent nothing), if
 * no later claim took it meanwhile: the connection's last check is the one before again.
 */
export async function releaseCheckSlot(
  database: Database,
  input: { id: string; claimedAt: number; previous: number | null },
): Promise<void> {
  await database.write
    .updateTable('connections')
    .set({ last_check_at: input.previous })
    .where('id', '=', input.id)
    .where('last_check_at', '=', input.claimedAt)
    .execute();
}

/** A connection with its project's slug (admin output). */
export async function findConnectionWithProject(
  database: Database,
  id: string,
): Promise<{ connection: Connection; projectSlug: string } | undefined> {
  const row = await database.read
    .selectFrom('connections as c')
    .innerJoin('projects as p', 'p.id', 'c.project_id')
    .selectAll('c')
    .select('p.slug as project_slug')
    .where('c.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const { project_slug, ...connection } = row;
  return { connection: toConnection(connection), projectSlug: project_slug };
}
