/**
 * `barge results --file requests.jsonl --out results.jsonl`: waits for every cargo of the file's map
 * and writes one line per input line, in input order. A window of lines is waited for at once and
 * written as its head completes, so memory holds the window, never the whole file's results.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { Command } from 'commander';
import type { Barge } from '../client/barge.js';
import type { CargoResult } from '../client/types.js';
import { jsonMembersText } from '../domain/json-text.js';
import { digestOf, mapPathOf, readCargoMap } from './cargo-map.js';
import { EXIT, missingCargo, parsePositive, runClient, withClientOptions } from './client-context.js';
import { print } from './output.js';
import { startProgress } from './progress.js';

const NOT_SUBMITTED = 'not submitted: the line was refused, or `barge submit --file` has not reached it';

export function registerResultsCommand(program: Command): void {
  const command = withClientOptions(
    program
      .command('results')
      .description("Wait for every cargo of a submitted file's map and write their results in input order")
      .requiredOption('--file <path>', 'the file given to `barge submit --file`')
      .requiredOption('--out <path>', 'where to write the results, one JSON object a line')
      .option('--concurrency <n>', 'cargo waited for at once', parsePositive, 32),
  );
  command.action(
    (opts: { file: string; out: string; concurrency: number; url?: string; key?: string; json?: boolean }) =>
      runClient(command, opts, async ({ barge, out }) => {
        const { lines } = await digestOf(opts.file);
        const map = await readCargoMap(mapPathOf(opts.file));
        const progress = startProgress(out, 'results', lines);
        const output = createWriteStream(opts.out);
        const counts = { succeeded: 0, failed: 0, not_submitted: 0 };
        const wait = (line: number) => resultLine(barge, line, map.get(line) ?? null);
        // The window: lines started ahead of the one written next.
        const window: Promise<ResultLine>[] = [];
        let next = 1;
        try {
          for (let written = 1; written <= lines; written++) {
            while (next <= lines && window.length < opts.concurrency) window.push(wait(next++));
            const entry = await (window.shift() as Promise<ResultLine>);
            counts[entry.outcome]++;
            if (!output.write(`${entry.text}\n`)) await once(output, 'drain');
            progress.update(written);
          }
        } finally {
          progress.stop();
          await new Promise<void>((resolve) => output.end(resolve));
        }
        print(
          out,
          { out: opts.out, lines, ...counts },
          () =>
            `${lines} lines written to ${opts.out}: ${counts.succeeded} succeeded, ${counts.failed} failed, ${counts.not_submitted} not submitted`,
        );
        if (counts.failed + counts.not_submitted > 0) process.exitCode = EXIT.failed;
      }),
  );
}

/** One line of the results file, as JSON text, and what became of its cargo. */
interface ResultLine {
  text: string;
  outcome: 'succeeded' | 'failed' | 'not_submitted';
}

/** A line's result; a cargo with none to wait for (not found, past its retention) is a failed line. */
async function resultLine(barge: Barge, line: number, cargoId: string | null): Promise<ResultLine> {
  const failed = (cargo_id: string | null, error_message: string): ResultLine => ({
    text: JSON.stringify({ line, cargo_id, success: false, response: null, error_message, metadata: null }),
    outcome: cargo_id === null ? 'not_submitted' : 'failed',
  });
  if (cargoId === null) return failed(null, NOT_SUBMITTED);
  let result: string;
  try {
    result = await barge.waitForResultText(cargoId);
  } catch (err) {
    const missing = missingCargo(err);
    if (missing === null) throw err;
    return failed(cargoId, missing.error_message);
  }
  const { success } = JSON.parse(result) as CargoResult;
  // The members as the service sent them, not parsed and written again: the metadata keeps every
  // digit of a number past 2^53 and its key order.
  const members = jsonMembersText(result, ['response', 'error_message', 'metadata']);
  const member = (name: string) => members.get(name) ?? 'null';
  return {
    text: `{"line":${line},"cargo_id":${JSON.stringify(cargoId)},"success":${success === true},"response":${member('response')},"error_message":${member('error_message')},"metadata":${member('metadata')}}`,
    outcome: success === true ? 'succeeded' : 'failed',
  };
}
