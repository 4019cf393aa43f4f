/**
 * The batch endpoints read their bodies as streams: a `barge serve --role api` child whose cargo
 * body limit is 1 MiB, and whose heap is capped at 128 MB, takes a 125 MB upload and an 80 MB
 * Message Batches create, and its peak resident memory (VmHWM, which no sampling can miss) stays
 * about where a small body of the same kind left it: a body held whole would add its size, and one
 * parsed whole would not fit in the heap. Streaming does not depend on the database: this runs on
 * the SQLite file only.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { serveHarness } from '../helpers/harness.js';

const MB = 1024 * 1024;

/** The peak resident memory of a process, in bytes (Linux). */
function peakRss(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  assert.ok(kb, 'VmHWM is readable');
  return Number(kb) * 1024;
}

/** A body streamed from its parts, made as they are sent (the test holds no whole body either). */
function streamed(parts: () => Generator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = parts();
  return new ReadableStream({
    pull(controller) {
      const next = iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
  });
}

const [sqlite] = await backends({ childProcesses: true });
if (!sqlite) throw new Error('no SQLite backend');

/** Generated pieces sent about 64 KiB at a time (undici sends each piece as a chunk). */
function* batched(pieces: Iterable<string>): Generator<string> {
  let buffer = '';
  for (const piece of pieces) {
    buffer += piece;
    if (buffer.length >= 64 * 1024) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer !== '') yield buffer;
}

async function post(url: string, path: string, headers: Record<string, string>, pieces: () => Generator<string>) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers,
    body: streamed(() => batched(pieces())),
    duplex: 'half',
  } as RequestInit);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text);
}

const BOUNDARY = 'barge-streaming-test';

/** A multipart upload of `lines` batch lines of about `lineBytes` bytes each. */
function uploadParts(lines: number, lineBytes: number): () => Generator<string> {
  const padding = 'x'.repeat(lineBytes - 120);
  return function* () {
    yield `--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`;
    yield `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n\r\n`;
    for (let i = 0; i < lines; i++) {
      const body = { model: 'svc-mock', messages: [{ role: 'user', content: padding }] };
      yield `${JSON.stringify({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body })}\n`;
    }
    yield `\r\n--${BOUNDARY}--\r\n`;
  };
}

/** A Message Batches create of `requests` requests of about `requestBytes` bytes each. */
function createParts(requests: number, requestBytes: number): () => Generator<string> {
  const padding = 'y'.repeat(requestBytes - 100);
  return function* () {
    yield '{"requests": [';
    for (let i = 0; i < requests; i++) {
      const params = { model: 'svc-mock', max_tokens: 5, messages: [{ role: 'user', content: padding }] };
      yield `${i === 0 ? '' : ','}${JSON.stringify({ custom_id: `q${i}`, params })}`;
    }
    yield ']}';
  };
}

describe('batch bodies stream into storage (barge serve, 1 MiB cargo limit)', () => {
  const h = serveHarness(sqlite);
  /** An API process (the workers would take the cargo meanwhile) with a 1 MiB cargo limit; its pid, url and a project's key. */
  const child = async () => {
    // A heap of 128 MB: a body parsed whole (a 100 MB text and its objects) would not fit in it.
    const { url, child } = await h.serve('api', {
      BARGE_BODY_LIMIT_BYTES: String(MB),
      NODE_OPTIONS: '--max-old-space-size=128',
    });
    assert.ok(url);
    const { key } = await createProjectWithKey(h.db.database);
    return { pid: child.child.pid as number, url: url as string, headers: { authorization: `Bearer ${key}` } };
  };
  /**
   * The first body takes the process to a plateau (V8 and the allocator give memory back in
   * batches of tens of MB; observed 10-20 MB more for the upload, and 22-33 for the create, whose
   * garbage strings the capped heap holds until a major GC); a body twice as large or more must
   * then leave the peak about where it was, where one held whole would raise it by its size.
   */
  const GROWTH_MAX = 60 * MB;

  test('an upload of 125 MB after one of 20 MB: the peak memory stays put', async () => {
    const { pid, url, headers } = await child();
    const upload = (lines: number) =>
      post(
        url,
        '/v1/files',
        { ...headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
        uploadParts(lines, 2600),
      );
    await upload(8000);
    const plateau = peakRss(pid);
    const file = await upload(48_000);
    assert.ok(file.bytes > 125_000_000, `the upload is ${file.bytes} bytes`);
    const growth = peakRss(pid) - plateau;
    assert.ok(
      growth < GROWTH_MAX,
      `peak RSS grew by ${Math.round(growth / MB)} MB from ${Math.round(plateau / MB)} MB`,
    );
  });

  test('a Message Batches create of 80 MB after one of 40 MB: taken in a 128 MB heap, the peak memory stays put', async () => {
    const { pid, url, headers } = await child();
    const create = (requests: number) =>
      post(
        url,
        '/v1/messages/batches',
        { ...headers, 'content-type': 'application/json' },
        createParts(requests, 10_000),
      );
    // 40 MB: after one of 15 MB, the heap still grew on its way to its cap (62 MB more on Node 22).
    await create(4000);
    const plateau = peakRss(pid);
    const batch = await create(8000);
    assert.equal(batch.request_counts.processing, 8000);
    const growth = peakRss(pid) - plateau;
    assert.ok(
      growth < GROWTH_MAX,
      `peak RSS grew by ${Math.round(growth / MB)} MB from ${Math.round(plateau / MB)} MB`,
    );
  });
});
