/** Reading request bodies: JSON only, gzip or deflate decoded within the body limit, and the raw text kept. */
import { Transform } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { FastifyInstance, FastifyRequest, RequestPayload } from 'fastify';
import { errors } from '../domain/errors.js';
import { jsonRefusal } from './errors.js';
import { markLargeBody } from './validation.js';

/**
 * The JSON text of a request body as received (after Content-Encoding is decoded), for what must
 * be echoed exactly as sent (metadata). A request decorator named by a symbol only this module
 * holds, read through `rawBodyOf`: typed without global module augmentation, gone with its request.
 * It is declared on the root because the parser that fills it is the root's (requests no route
 * takes get their body read, and refused, the same way).
 */
const RAW_BODY = Symbol('barge.rawBody');

/** The body's JSON text as received, if it was parsed as JSON. */
export function rawBodyOf(request: FastifyRequest): string | undefined {
  return request.getDecorator<string | null>(RAW_BODY) ?? undefined;
}

/**
 * JSON bodies only, possibly compressed: Fastify's own parsers are replaced by one that keeps
 * the text and says why a body was refused. Call before any plugin scope is registered, so every
 * scope inherits it.
 */
export function installJsonBody(app: FastifyInstance, bodyLimit: number): void {
  app.decorateRequest(RAW_BODY, null);
  // Without this, Fastify's built-in text/plain parser turns a plain-text body into a 400 "must be
  // object" instead of the 415 it is.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    request.setDecorator(RAW_BODY, body as string);
    parseJson(request, body as string, (err, value) => {
      // Fastify's refusal no longer says why; a body that is there but refused gets the reason.
      if (err && (err as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY') done(jsonRefusal(body as string));
      else {
        markLargeBody(value, (body as string).length);
        done(err, value);
      }
    });
  });
  // Bodies may be sent compressed; the parser above (and the raw text) sees the decoded text.
  // A route that takes larger bodies (the provider-compatible batch endpoints) holds the decoded
  // text to its own limit.
  app.addHook('preParsing', async (request, _reply, payload) =>
    decodeContentEncoding(request, payload, request.routeOptions.bodyLimit ?? bodyLimit),
  );
}

const DECODERS = new Map<string, () => Transform>([
  ['gzip', createGunzip],
  ['x-gzip', createGunzip],
  ['deflate', createInflate],
]);

/**
 * The request body as the JSON parser must see it: `Content-Encoding: gzip` or `deflate` is
 * decoded, with both the sent and the decoded size held to the body limit as it streams (a zip
 * bomb stops inflating at the limit: 413); a body that is not what its coding says is 400, and
 * any other coding 415.
 */
function decodeContentEncoding(request: FastifyRequest, payload: RequestPayload, limit: number): RequestPayload {
  const header = request.headers['content-encoding'];
  if (header === undefined) return payload;
  const { 'transfer-encoding': transferEncoding, 'content-length': contentLength } = request.headers;
  if (transferEncoding === undefined && (contentLength === undefined || contentLength === '0')) return payload;
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  const [coding] = codings;
  if (coding === undefined) return payload;
  const createDecoder = codings.length === 1 ? DECODERS.get(coding) : undefined;
  if (!createDecoder) throw errors.unsupportedContentEncoding(header.trim());

  const decoder = createDecoder();
  let decoded = 0;
  // Fastify matches `receivedEncodedLength` (the bytes sent) against Content-Length.
  const output = Object.assign(
    new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        decoded += chunk.length;
        if (decoded > limit) callback(errors.bodyTooLarge(limit));
        else callback(null, chunk);
      },
    }),
    { receivedEncodedLength: 0 },
  );
  let failed = false;
  const fail = (err: Error) => {
    if (failed) return;
    failed = true;
    payload.unpipe(decoder);
    decoder.destroy();
    output.destroy(err);
    // The rest of the body is drained (and counted no further), so the answer can go out.
    payload.resume();
  };
  payload.on('data', (chunk: Buffer) => {
    if (failed) return;
    output.receivedEncodedLength += chunk.length;
    if (output.receivedEncodedLength > limit) fail(errors.bodyTooLarge(limit));
  });
  payload.on('error', fail);
  decoder.on('error', (err) => fail(errors.invalidContentEncoding(coding === 'x-gzip' ? 'gzip' : coding, err.message)));
  output.on('error', fail);
  payload.pipe(decoder).pipe(output);
  return output;
}
