/**
 * Reads an uploaded Batch input file line by line (its chunks from the store, never the whole
 * file) into a batch being created: each line's envelope checked and its body translated
 * (chat-request.ts), then checked as POST /cargo/load checks a body's `params`, and staged. A bad
 * line is an entry of the batch's `errors` with its 1-based line number, and then no cargo is
 * created (decisions.md). At most MAX_LINES requests; errors are reported up to MAX_ERRORS.
 */

import { findPoisonedKey } from '../../http/errors.js';
import { TimeSlices } from '../../turns.js';
import type { BatchIntake } from '../batch-intake.js';
import { isRefusal } from '../batch-intake.js';
import { lineProblemOf, translateLine } from './chat-request.js';
import type { BatchError } from './objects.js';

/** OpenAI's limit of requests in one batch. */
export const MAX_LINES = 50_000;
/** A failed batch lists at most this many errors (a file of bad lines has as many as lines). */
export const MAX_ERRORS = 1000;

/** The codes of a request refused as POST /cargo/load would refuse it. */
const REFUSAL_CODES: Record<string, string> = { invalid_body: 'invalid_value' };

/** Splits chunks of bytes into lines (`\n`, with a `\r` before it dropped), decoding UTF-8 across chunk ends. */
export async function* linesOfChunks(chunks: AsyncIterable<Buffer>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let partial = '';
  for await (const chunk of chunks) {
    partial += decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = partial.indexOf('\n', start); end >= 0; end = partial.indexOf('\n', start)) {
      yield partial.slice(start, end).replace(/\r$/, '');
      start = end + 1;
    }
    partial = partial.slice(start);
  }
  partial += decoder.decode();
  if (partial !== '') yield partial.replace(/\r$/, '');
}

/** Feeds every line of the file into the intake; the errors found (none: the batch may be made). */
export async function readBatchLines(
  lines: AsyncIterable<string>,
  intake: BatchIntake,
  endpoint: string,
): Promise<BatchError[]> {
  const errors: BatchError[] = [];
  const seen = new Set<string>();
  const slices = new TimeSlices();
  let lineNumber = 0;
  let requests = 0;
  for await (const text of lines) {
    lineNumber++;
    if (slices.due) await slices.pause();
    if (text.trim() === '') continue;
    if (++requests > MAX_LINES) {
      errors.push({
        code: 'too_many_tasks',
        message: `The batch input file has more than ${MAX_LINES} requests; the limit is ${MAX_LINES}.`,
        param: null,
        line: null,
      });
      break;
    }
    const found = lineErrors(text, seen, intake, endpoint);
    if ('checked' in found) {
      // Once a line was refused no cargo will be made: the others are only checked.
      if (errors.length === 0) await intake.add(found.customId, found.checked);
    } else {
      for (const problem of found.problems) errors.push({ ...problem, line: lineNumber });
    }
    if (errors.length >= MAX_ERRORS) break;
  }
  if (requests === 0) {
    errors.push({ code: 'empty_file', message: 'The batch input file is empty.', param: null, line: null });
  }
  return errors.slice(0, MAX_ERRORS);
}

type LineOutcome =
  | { customId: string; checked: Parameters<BatchIntake['add']>[1] }
  | { problems: Omit<BatchError, 'line'>[] };

function lineErrors(text: string, seen: Set<string>, intake: BatchIntake, endpoint: string): LineOutcome {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {
      problems: [{ code: 'invalid_json_line', message: 'This line is not parseable as valid JSON.', param: null }],
    };
  }
  const poisoned = findPoisonedKey(value);
  if (poisoned) return { problems: [{ code: 'invalid_value', message: poisoned.message, param: null }] };
  const line = translateLine(value, endpoint);
  if (!line.ok) return { problems: line.problems };
  if (seen.has(line.customId)) {
    return {
      problems: [
        {
          code: 'duplicate_custom_id',
          message:
            'The custom_id for this request is a duplicate of another request. The custom_id parameter must be unique for each request in a batch.',
          param: 'custom_id',
        },
      ],
    };
  }
  seen.add(line.customId);
  const checked = intake.check(line.params);
  if (!isRefusal(checked)) return { customId: line.customId, checked };
  const code = REFUSAL_CODES[checked.code] ?? checked.code;
  return { problems: checked.problems.map((problem) => ({ ...lineProblemOf(problem, line.fieldOf), code })) };
}
