/** The object-store rig: S3 behind a recording proxy, STS and SMTP on loopback, and the config that points at them. */
import { randomBytes } from 'node:crypto';
import type { Config } from '../../src/config.js';
import { newExternalId } from '../../src/domain/connections.js';
import { newId } from '../../src/domain/ids.js';
import { type Connection, insertConnection } from '../../src/store/admin/connections.js';
import { changeProjectSettings } from '../../src/store/admin/projects.js';
import type { Database } from '../../src/store/database.js';
import { testConfig } from './app.js';
import { type S3Proxy, startS3Proxy } from './s3-proxy.js';
import { type S3Server, SERVICE_CREDENTIALS, startS3Server } from './s3-server.js';
import { type SmtpCapture, startSmtpCapture } from './smtp-capture.js';
import { type StsEndpoint, startStsEndpoint } from './sts-endpoint.js';

export interface ObjectStoreRig {
  s3: S3Server;
  /** The service's S3 endpoint: a recording, scriptable proxy in front of the S3 server. */
  proxy: S3Proxy;
  sts: StsEndpoint;
  smtp: SmtpCapture;
  /** Config overrides pointing the service at the rig. */
  config: Partial<Config>;
  /** A fresh bucket name (and creates the bucket). */
  bucket(): Promise<string>;
  /** A role connection the STS endpoint trusts, optionally with an allow-list. */
  roleConnection(database: Database, projectId: string, options?: { allow?: string[] }): Promise<Connection>;
  close(): Promise<void>;
}

let counter = 0;

/** Everything object delivery talks to, on loopback: S3 (behind a proxy), STS and SMTP. */
export async function startObjectStoreRig(): Promise<ObjectStoreRig> {
  const s3 = await startS3Server();
  const proxy = await startS3Proxy(s3.url);
  const sts = await startStsEndpoint();
  const smtp = await startSmtpCapture();
  const base = testConfig();
  const config: Partial<Config> = {
    objectStore: {
      ...base.objectStore,
      s3Endpoint: proxy.url,
      stsEndpoint: sts.url,
      forcePathStyle: true,
      credentials: SERVICE_CREDENTIALS,
      attemptTimeoutMs: 10_000,
      throttleBaseDelayMs: 5,
    },
    smtp: { url: smtp.url, from: 'barge <barge@barge.test>' },
    publicBaseUrl: 'https://barge.test',
    secretKey: randomBytes(32),
  };
  return {
    s3,
    proxy,
    sts,
    smtp,
    config,
    async bucket() {
      const name = `bkt-${process.pid}-${++counter}-${randomBytes(3).toString('hex')}`;
      await s3.createBucket(name);
      return name;
    },
    async roleConnection(database, projectId, options = {}) {
      const roleArn = `arn:aws:iam::444455556666:role/barge-delivery-${++counter}`;
      const connection = await insertConnection(database, {
        id: newId('conn'),
        projectId,
        roleArn,
        externalId: newExternalId(),
        allowedTargets: options.allow ?? null,
        endpointUrl: null,
        region: null,
        sealedCredentials: null,
        now: Date.now(),
      });
      sts.addRole(roleArn, connection.externalId);
      return connection;
    },
    async close() {
      await smtp.close();
      await sts.close();
      await proxy.close();
      await s3.close();
    },
  };
}

/** Gives the project a notification address for incident mail. */
export async function notifyTo(database: Database, slug: string, email: string): Promise<void> {
  await changeProjectSettings(database, slug, { notificationEmail: email }, Date.now());
}
