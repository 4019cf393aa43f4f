/**
 * Reads the `requests` of a Message Batches create body (`{"requests": [{custom_id, params}, …]}`)
 * as its bytes arrive: each request is handed out as soon as it is complete and dropped from the
 * parser, so a 256 MB body is never held whole. Any run of `maxRequestBytes` (barge's cargo body
 * limit) without a request completed is refused while it arrives: a request that large, and as
 * well one JSON token that large anywhere in the body (a key, a string, a number before or after
 * the list), so nothing a tenant sends is buffered past that bound. @streamparser/json does the
 * parsing; this only watches the top level (`requests` is the one key, an array) and the sizes.
 */
import { Tokenizer, TokenParser, TokenType } from '@streamparser/json';

/** A problem of the body, answered 400 (or 413 for a size) in the API's shape. */
export class BodyProblem extends Error {
  constructor(
    readonly status: 400 | 413,
    message: string,
  ) {
    super(message);
    this.name = 'BodyProblem';
  }
}

export interface ReadRequest {
  index: number;
  value: unknown;
}

/** Bytes handed to the parser at once: a chunk's requests are handed out before the next slice. */
const SLICE = 64 * 1024;

/**
 * The tokenizer gathers a string or a number into a byte buffer of this size rather than into a
 * list of one-character strings (its default): a 10 MB number or string of escapes then costs
 * about its size in memory and 0.2 s, where the default took 120 MB of heap and 0.7 s.
 */
const TOKEN_BUFFER_BYTES = 64 * 1024;

export class RequestsReader {
  private readonly tokenizer = new Tokenizer({
    stringBufferSize: TOKEN_BUFFER_BYTES,
    numberBufferSize: TOKEN_BUFFER_BYTES,
  });
  private readonly parser = new TokenParser({ paths: ['$.requests.*'], keepStack: false });
  private ready: ReadRequest[] = [];
  /** Bytes written since the last request was handed out (a request's size, within a slice). */
  private sinceLast = 0;
  /** The index of the request being read. */
  private next = 0;
  private depth = 0;
  private expectKey = false;
  private sawRequests = false;
  private requestsIsArray = false;
  /** The colon after `requests` was read: its value's first token comes next. */
  private afterColon = false;

  constructor(private readonly maxRequestBytes: number) {
    this.tokenizer.onToken = (info) => {
      this.watch(info.token, info.value);
      this.parser.write(info);
    };
    this.parser.onValue = ({ value, key, parent }) => {
      if (!Array.isArray(parent)) throw new BodyProblem(400, 'requests: Input should be a valid list');
      this.ready.push({ index: key as number, value });
      this.next = (key as number) + 1;
      this.sinceLast = 0;
    };
    // Errors surface from write() and end() as thrown exceptions.
    this.parser.onError = (err) => {
      throw err;
    };
  }

  /** Feeds bytes; returns the requests they completed, in order. */
  write(chunk: Buffer): ReadRequest[] {
    for (let at = 0; at < chunk.length; at += SLICE) {
      const slice = chunk.subarray(at, at + SLICE);
      this.sinceLast += slice.length;
      this.feed(() => this.tokenizer.write(slice));
      if (this.sinceLast > this.maxRequestBytes) {
        throw new BodyProblem(
          413,
          this.requestsIsArray && this.depth >= 2
            ? `requests.${this.next}: larger than the limit of ${this.maxRequestBytes} bytes for one request`
            : `The body holds a JSON value larger than the limit of ${this.maxRequestBytes} bytes for one request`,
        );
      }
    }
    const out = this.ready;
    this.ready = [];
    return out;
  }

  /** The body ended: throws unless it was one complete object with a `requests` array. */
  end(): ReadRequest[] {
    this.feed(() => this.tokenizer.end());
    if (!this.parser.isEnded) throw new BodyProblem(400, 'Request body is not valid JSON: it ended early.');
    if (!this.sawRequests) throw new BodyProblem(400, 'requests: Field required');
    if (!this.requestsIsArray) throw new BodyProblem(400, 'requests: Input should be a valid list');
    const out = this.ready;
    this.ready = [];
    return out;
  }

  private feed(step: () => void): void {
    try {
      step();
    } catch (err) {
      if (err instanceof BodyProblem) throw err;
      throw new BodyProblem(400, `Request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** The top level: an object whose one key is `requests`, holding an array. */
  private watch(token: TokenType, value: unknown): void {
    if (this.depth === 0 && token !== TokenType.LEFT_BRACE) {
      throw new BodyProblem(400, 'Request body must be a JSON object: {"requests": [...]}');
    }
    if (this.depth === 1 && this.expectKey && token === TokenType.STRING) {
      if (value !== 'requests') throw new BodyProblem(400, `${String(value)}: Extra inputs are not permitted`);
      if (this.sawRequests) throw new BodyProblem(400, 'requests: given twice');
      this.sawRequests = true;
      this.expectKey = false;
      return;
    }
    if (this.depth === 1 && token === TokenType.COLON && this.sawRequests) this.afterColon = true;
    else if (this.afterColon) {
      this.requestsIsArray = token === TokenType.LEFT_BRACKET;
      if (!this.requestsIsArray) throw new BodyProblem(400, 'requests: Input should be a valid list');
      this.afterColon = false;
    }
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) {
      this.depth++;
      this.expectKey = this.depth === 1;
    } else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) {
      this.depth--;
    } else if (this.depth === 1 && token === TokenType.COMMA) {
      this.expectKey = true;
    }
  }
}
