/** The AWS SDK clients a process shares (STS, S3, SQS, SNS, EventBridge) and the targets they act on. */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { STSClient } from '@aws-sdk/client-sts';
import type { AwsEndpoints, ObjectStoreConfig } from '../../config.js';

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

/** Where a message target is reached: its region and the credentials of the delivery session. */
export interface MessageTarget {
  region: string;
  credentials: SigningCredentials;
}

/**
 * The AWS SDK clients of one process. STS is called with the service's own identity (the standard
 * credential chain unless the config gives credentials); S3, SQS, SNS and EventBridge are called
 * with a delivery session's (or a connection's static) credentials, so their clients are made per
 * call over one shared pool of keep-alive sockets. The SDK's own retries are off: a failed call is a value the caller
 * classifies, and throttling has its own backoff (throttle-backoff.ts).
 */
export class AwsClients {
  readonly sts: STSClient;
  private readonly requestHandler;

  constructor(
    config: ObjectStoreConfig,
    private readonly endpoints: AwsEndpoints = { sqs: null, sns: null, eventBridge: null },
  ) {
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

  sqs(target: MessageTarget): SQSClient {
    // Requests go to the region's endpoint (or the override), never to the host a queue URL names.
    return new SQSClient({
      ...this.messageClientConfig(target),
      useQueueUrlAsEndpoint: false,
      ...endpoint(this.endpoints.sqs),
    });
  }

  sns(target: MessageTarget): SNSClient {
    return new SNSClient({ ...this.messageClientConfig(target), ...endpoint(this.endpoints.sns) });
  }

  eventBridge(target: MessageTarget): EventBridgeClient {
    return new EventBridgeClient({ ...this.messageClientConfig(target), ...endpoint(this.endpoints.eventBridge) });
  }

  private messageClientConfig(target: MessageTarget) {
    return {
      region: target.region,
      credentials: target.credentials,
      maxAttempts: 1,
      requestHandler: this.requestHandler,
    };
  }

  /** Closes the pooled sockets (process shutdown, tests). */
  destroy(): void {
    this.sts.destroy();
    this.requestHandler.httpAgent.destroy();
    this.requestHandler.httpsAgent.destroy();
  }
}

function endpoint(url: string | null): { endpoint?: string } {
  return url ? { endpoint: url } : {};
}
