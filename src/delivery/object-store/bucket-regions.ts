/** A bucket's region, found at delivery time with HeadBucket and cached, so a bucket may live in any region. */
import { HeadBucketCommand } from '@aws-sdk/client-s3';
import { rememberBounded } from '../../bounded-map.js';
import type { AwsClients, S3Target } from '../aws/aws-clients.js';
import { type AwsFailure, awsFailure, isThrottle } from '../aws/aws-errors.js';

export type RegionOutcome =
  | { kind: 'region'; region: string }
  | { kind: 'not_found'; failure: AwsFailure }
  | { kind: 'failed'; failure: AwsFailure };

/**
 * Finds a bucket's region at delivery time, so a bucket may live in any region (document 6.3,
 * rule 5). HeadBucket answers with `x-amz-bucket-region` even to a caller that may only put
 * objects (its 403 carries the header, as does the 301 of a wrong-region request); a store that
 * does not send it (S3-compatible ones) keeps the region the request was made with. Answers are
 * cached for a while in a bounded map.
 */
export class BucketRegions {
  private readonly cache = new Map<string, { region: string; until: number }>();

  constructor(
    private readonly clients: AwsClients,
    private readonly options: { now: () => number; ttlMs?: number; maxEntries?: number },
  ) {}

  async resolve(target: S3Target, bucket: string, signal: AbortSignal): Promise<RegionOutcome> {
    const key = `${target.endpoint ?? 'aws'}\n${bucket}`;
    const cached = this.cache.get(key);
    if (cached && cached.until > this.options.now()) return { kind: 'region', region: cached.region };
    const outcome = await this.head(target, bucket, signal);
    if (outcome.kind === 'region') this.remember(key, outcome.region);
    return outcome;
  }

  /** A region found wrong (S3 redirected a write): look again next time. */
  forget(target: S3Target, bucket: string): void {
    this.cache.delete(`${target.endpoint ?? 'aws'}\n${bucket}`);
  }

  private async head(target: S3Target, bucket: string, signal: AbortSignal): Promise<RegionOutcome> {
    const client = this.clients.s3(target, { followRegionRedirects: false });
    try {
      const output = await client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal: signal });
      return { kind: 'region', region: output.BucketRegion ?? target.region };
    } catch (err) {
      const failure = awsFailure(err);
      const reported = failure.headers['x-amz-bucket-region'];
      if (reported) return { kind: 'region', region: reported };
      if (failure.statusCode === 404) return { kind: 'not_found', failure };
      // No answer, or the store is busy: the attempt fails (throttling is backed off by the caller).
      if (failure.statusCode === null || failure.statusCode >= 500 || isThrottle(failure)) {
        return { kind: 'failed', failure };
      }
      // Answered, without a region (e.g. a 403 from a store that does not report it): the write
      // itself tells whether the bucket takes objects.
      return { kind: 'region', region: target.region };
    }
  }

  private remember(key: string, region: string): void {
    const until = this.options.now() + (this.options.ttlMs ?? 3_600_000);
    rememberBounded(this.cache, key, { region, until }, this.options.maxEntries ?? 10_000);
  }
}
