/** `barge submit`: one prompt (or standard input), or a JSONL file of request bodies (bulk-submit.ts). */
import { readFileSync } from 'node:fs';
import { type Command, InvalidArgumentError } from 'commander';
import type { Barge } from '../client/barge.js';
import type { CargoResult, LoadRequest } from '../client/types.js';
import { submitFile } from './bulk-submit.js';
import { EXIT, parsePositive, runClient, UsageError, withClientOptions } from './client-context.js';
import { type Output, print } from './output.js';
import { pipelinedAgent } from './undici-transport.js';

interface SubmitOptions {
  url?: string;
  key?: string;
  json?: boolean;
  file?: string;
  concurrency: number;
  model?: string;
  system?: string;
  maxTokens?: number;
  metadata?: Record<string, unknown>;
  callbackUrl?: string;
  wait?: boolean;
}

export function registerSubmitCommand(program: Command): void {
  const command = withClientOptions(
    program
      .command('submit [prompt]')
      .description('Submit one prompt (`-` reads it from standard input), or every line of --file')
      .option('--file <path>', 'a JSONL file, one POST /cargo/load body a line; resumable through <path>.cargo')
      .option('--concurrency <n>', 'requests in flight with --file', parsePositive, 32)
      .option('--model <id>', 'the model (a GET /models id, or a provider-qualified name)')
      .option('--system <text>', 'system prompt')
      .option('--max-tokens <n>', 'max_tokens', parsePositive)
      .option('--metadata <json>', 'a JSON object echoed with the result', parseMetadata)
      .option('--callback-url <url>', 'webhook target')
      .option('--wait', 'wait for the result; the cargo id goes to stderr and the answer to stdout'),
  );
  command.action((prompt: string | undefined, opts: SubmitOptions) => {
    const { file, concurrency } = opts;
    if (file === undefined) return runClient(command, opts, ({ barge, out }) => submitOne(barge, out, prompt, opts));
    return runClient(
      command,
      opts,
      ({ barge, out }) => submitBulk(barge, out, prompt, file, concurrency),
      pipelinedAgent(concurrency),
    );
  });
}

/** `barge submit --file`: every line of the file, resumable (bulk-submit.ts). */
async function submitBulk(
  barge: Barge,
  out: Output,
  prompt: string | undefined,
  file: string,
  concurrency: number,
): Promise<void> {
  if (prompt !== undefined) throw new UsageError('give a prompt or --file, not both');
  const controller = new AbortController();
  // The first Ctrl-C lets the requests in flight finish and be recorded; a second one ends at once.
  process.once('SIGINT', () => {
    controller.abort();
    process.once('SIGINT', () => process.exit(EXIT.interrupted));
  });
  const summary = await submitFile(barge, file, { concurrency, out, signal: controller.signal });
  if (summary.stopped !== null && !out.json) process.stderr.write(`barge: ${summary.stopped.message}\n`);
  print(out, summary, () =>
    [
      `${summary.submitted} submitted, ${summary.skipped} already in ${summary.map}, ${summary.refused.length} refused, of ${summary.lines} lines`,
      ...(summary.interrupted
        ? [`${summary.stopped ? 'Stopped' : 'Interrupted'}: run the same command again to submit the rest.`]
        : []),
    ].join('\n'),
  );
  if (summary.stopped !== null) {
    process.exitCode = summary.stopped.status === 0 ? EXIT.unreachable : EXIT.failed;
  } else if (summary.interrupted) process.exitCode = EXIT.interrupted;
  else if (summary.refused.length > 0) process.exitCode = EXIT.failed;
}

/** `barge submit <prompt | ->`: one cargo, and with --wait its answer. */
async function submitOne(barge: Barge, out: Output, prompt: string | undefined, opts: SubmitOptions): Promise<void> {
  if (opts.model === undefined) throw new UsageError('--model is required (or give --file)');
  if (prompt === undefined) throw new UsageError('give a prompt, or - to read it from standard input');
  const content = prompt === '-' ? readFileSync(0, 'utf8') : prompt;
  if (content.trim() === '') throw new UsageError('the prompt is empty');
  const body: LoadRequest = {
    params: {
      model: opts.model,
      messages: [{ role: 'user', content }],
      ...(opts.system === undefined ? {} : { system: opts.system }),
      ...(opts.maxTokens === undefined ? {} : { max_tokens: opts.maxTokens }),
    },
    ...(opts.metadata === undefined ? {} : { metadata: opts.metadata }),
    ...(opts.callbackUrl === undefined ? {} : { callback_url: opts.callbackUrl }),
  };
  const { cargo_id } = await barge.load(body);
  if (!opts.wait) return print(out, { cargo_id }, () => cargo_id);
  process.stderr.write(`${cargo_id}\n`);
  const result = await barge.waitForResult(cargo_id);
  print(out, result, () => (result.success ? textOf(result) : `failed: ${result.error_message}`));
  if (!result.success) process.exitCode = EXIT.failed;
}

/** The text blocks of a model message, joined. */
export function textOf(result: CargoResult): string {
  const content = (result.response as { content?: { type?: string; text?: string }[] } | null)?.content ?? [];
  return content
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('');
}

function parseMetadata(value: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // refused below
  }
  throw new InvalidArgumentError('must be a JSON object');
}
