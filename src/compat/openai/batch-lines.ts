/**
 * Reads an uploaded Batch input file line by line (its chunks from the store, never the whole
 * file) into a batch being created: each line's envelope checked and its body translated
 * (chat-request.ts), then checked as POST /cargo/load checks a body's `params`, and staged. A bad
 * line is an entry of the batch's `errors` with its 1-based line number, and then no cargo is
 * created (decisions.md). At most `maxLines` requests, each line at most the cargo body limit;
 * errors are reported up to MAX_ERRORS, each message and param cut at MAX_QUOTED_TEXT characters.
 */

import { findPoisonedKey } from '../../domain/poisoned-keys.js';
import { TimeSlices } from '../../turns.js';
import type { BatchIntake } from '../batch-intake.js';
import { isRefusal } from '../batch-intake.js';
import { cutText } from '../error-shapes.js';
import { lineProblemOf, translateLine } from './chat-request.js';
import type { BatchError } from './objects.js';

/** A failed batch lists at most this many errors (a file of bad lines has as many as lines). */
export const MAX_ERRORS = 1000;

/** The codes of a request refused as POST /cargo/load would refuse it. */
const REFUSAL_CODES: Record<string, string> = { invalid_body: 'invalid_value' };

/** A line of the file: its text, or how long it was when it was over the cap (its bytes are not kept). */
export type FileLine = { text: string } | { tooLong: number };

/**
 * Splits chunks of bytes into lines (`\n`, with a `\r` before it dropped). Linear in the bytes
 * however they are cut, into few large chunks or many tiny ones: each byte is looked at once and
 * copied once into the line's buffer (which doubles as it must, up to the cap). A line longer
 * than `maxLineBytes` is not kept: it is reported by its length and the rest of it skipped, so
 * one huge line never sits in memory.
 */
export async function* linesOfChunks(chunks: AsyncIterable<Buffer>, maxLineBytes: number): AsyncGenerator<FileLine> {
  const decoder = new TextDecoder();
  let buffer = Buffer.allocUnsafe(Math.min(64 * 1024, maxLineBytes));
  let length = 0;
  const take = (piece: Buffer) => {
    const end = length + piece.length;
    if (end <= maxLineBytes) {
      if (end > buffer.length) {
        const grown = Buffer.allocUnsafe(Math.min(Math.max(end, 2 * buffer.length), maxLineBytes));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      piece.copy(buffer, length);
    }
    length = end;
  };
  const line = (): FileLine => {
    const out: FileLine =
      length > maxLineBytes
        ? { tooLong: length }
        : { text: decoder.decode(buffer.subarray(0, length)).replace(/\r$/, '') };
    length = 0;
    return out;
  };
  for await (const chunk of chunks) {
    let start = 0;
    for (let end = chunk.indexOf(10); end >= 0; end = chunk.indexOf(10, start)) {
      take(chunk.subarray(start, end));
      yield line();
      start = end + 1;
    }
    if (start < chunk.length) take(chunk.subarray(start));
  }
  if (length > 0) yield line();
}

/** Feeds every line of the file into the intake; the errors found (none: the batch may be made). */
export async function readBatchLines(
  lines: AsyncIterable<FileLine>,
  intake: BatchIntake,
  endpoint: string,
  limits: { maxLineBytes: number; maxLines: number },
): Promise<BatchError[]> {
  const { maxLineBytes, maxLines } = limits;
  const errors: BatchError[] = [];
  const seen = new Set<string>();
  const slices = new TimeSlices();
  let lineNumber = 0;
  let requests = 0;
  for await (const read of lines) {
    lineNumber++;
    if (slices.due) await slices.pause();
    if ('tooLong' in read) {
      errors.push({
        code: 'line_too_large',
        message: `This line is ${read.tooLong} bytes; a request is at most ${maxLineBytes} bytes.`,
        param: null,
        line: lineNumber,
      });
      if (errors.length >= MAX_ERRORS) break;
      continue;
    }
    const text = read.text;
    if (text.trim() === '') continue;
    if (++requests > maxLines) {
      errors.push({
        code: 'too_many_tasks',
        message: `The batch input file has more than ${maxLines} requests; the limit is ${maxLines}.`,
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
      for (const problem of found.problems.slice(0, MAX_ERRORS - errors.length))
        errors.push({ ...boundedProblem(problem), line: lineNumber });
    }
    if (errors.length >= MAX_ERRORS) break;
  }
  if (requests === 0) {
    errors.push({ code: 'empty_file', message: 'The batch input file is empty.', param: null, line: null });
  }
  return errors.slice(0, MAX_ERRORS);
}

/** A problem's message and param may quote the tenant's keys: cut, so a failed batch's errors stay small. */
function boundedProblem(problem: Omit<BatchError, 'line'>): Omit<BatchError, 'line'> {
  return {
    ...problem,
    message: cutText(problem.message),
    param: problem.param === null ? null : cutText(problem.param),
  };
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
