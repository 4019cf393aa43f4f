import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { S3Client } from '@aws-sdk/client-s3';
import { STSClient } from '@aws-sdk/client-sts';
import type { ObjectStoreConfig } from '../../config.js';

export interface SigningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

export interface S3Target {
  region: string;
  /** null: AWS's own endpoint for the region. */
  endpoint: string | null;
  forcePathStyle: boolean;
  credentials: SigningCredentials;
}

/**
 * The AWS SDK clients of one process. STS is called with the service's own identity (the standard
 * credential chain unless the config gives credentials); S3 is called with a delivery session's
 * (or a connection's static) credentials, so an S3 client is made per call over one shared pool
 * of keep-alive sockets. The SDK's own retries are off: a failed call is a value the caller
 * classifies, and throttling has its own backoff (throttle-backoff.ts).
 */
export class AwsClients {
  readonly sts: STSClient;
  private readonly requestHandler;

  constructor(config: ObjectStoreConfig) {
    this.requestHandler = {
      httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 64 }),
      httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 64 }),
      connectionTimeout: 5_000,
      // Socket inactivity, not the whole call: a large object keeps the socket busy.
      requestTimeout: 30_000,
    };
    this.sts = new STSClient({
      region: config.region,
      maxAttempts: 1,
      requestHandler: this.requestHandler,
      ...(config.stsEndpoint ? { endpoint: config.stsEndpoint } : {}),
      ...(config.credentials ? { credentials: config.credentials } : {}),
    });
  }

  s3(target: S3Target, options: { followRegionRedirects: boolean }): S3Client {
    return new S3Client({
      region: target.region,
      credentials: target.credentials,
      forcePathStyle: target.forcePathStyle,
      followRegionRedirects: options.followRegionRedirects,
      maxAttempts: 1,
      requestHandler: this.requestHandler,
      // Checksums only where S3 requires them: many S3-compatible stores refuse the newer
      // default trailers, and SigV4 already signs the payload hash.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(target.endpoint ? { endpoint: target.endpoint } : {}),
    });
  }

  /** Closes the pooled sockets (process shutdown, tests). */
  destroy(): void {
    this.sts.destroy();
    this.requestHandler.httpAgent.destroy();
    this.requestHandler.httpsAgent.destroy();
  }
}
