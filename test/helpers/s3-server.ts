/** A real S3 server (s3rver) on loopback with a client to set up and read back, and the key pairs it accepts. */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { registerMessagingKeyPair } from './aws-messaging.js';

/** The key pair s3rver knows from the start; the service's own identity in these tests. */
export const SERVICE_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

const require = createRequire(import.meta.url);

/**
 * s3rver only accepts requests signed with access key ids it knows (it does not recompute SigV4
 * signatures): the test STS endpoint registers each key pair it hands out. The pair (with its session
 * token) is registered with the SQS, SNS and EventBridge emulators too.
 */
export function registerKeyPair(accessKeyId: string, secretAccessKey: string, sessionToken?: string): void {
  const account = require('s3rver/lib/models/account.js') as {
    DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void };
  };
  account.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
  registerMessagingKeyPair(accessKeyId, secretAccessKey, sessionToken);
}

export interface StoredObject {
  body: Buffer;
  contentType: string | undefined;
  metadata: Record<string, string>;
}

/** A real S3 server (s3rver) on a loopback port, with a client to set up and read back. */
export async function startS3Server() {
  const directory = mkdtempSync(join(tmpdir(), 'barge-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();
  const url = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    region: 'us-east-1',
    endpoint: url,
    forcePathStyle: true,
    credentials: SERVICE_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    url,
    async createBucket(name: string) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    /** Empties and deletes a bucket (a customer deleting it after submit). */
    async deleteBucket(name: string) {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: name }));
      for (const object of listed.Contents ?? []) {
        await client.send(new DeleteObjectCommand({ Bucket: name, Key: object.Key }));
      }
      await client.send(new DeleteBucketCommand({ Bucket: name }));
    },
    async keys(bucket: string): Promise<string[]> {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
      return (listed.Contents ?? []).map((o) => o.Key as string).sort();
    },
    async getObject(bucket: string, key: string): Promise<StoredObject> {
      const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return {
        body: Buffer.from(await (out.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray()),
        contentType: out.ContentType,
        metadata: out.Metadata ?? {},
      };
    },
    async close() {
      client.destroy();
      server.httpServer.closeAllConnections();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

export type S3Server = Awaited<ReturnType<typeof startS3Server>>;
