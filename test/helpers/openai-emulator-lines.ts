/**
 * OpenAI's wire shapes for the OpenAI emulator (openai-emulator.ts): its error object (in HTTP
 * answers and in error-file lines), and the lines of batch files: what the real API
 * checks in an input file while a batch is `validating` (codes from field-notes.md §3.2; the code
 * for a method other than POST, `invalid_method`, is this emulator's guess), and the output and
 * error lines it writes per request: `{id, custom_id, response: {status_code, request_id, body},
 * error}`, with a failed request as `status_code` ≥ 400, `response.body.error` and `error: null`,
 * and a request that never ran as `response: null` with `error.code` `batch_expired` /
 * `batch_cancelled`.
 */
import { EXTRA_FIELD, estimateTokens, HttpError, jsonlLines, REPLY_WORDS, randomId } from './emulator-http.js';

export const CHAT_COMPLETIONS = '/v1/chat/completions';

export interface InputLine {
  custom_id: string;
  method: string;
  url: string;
  body: Record<string, unknown>;
}

export interface RequestError {
  message: string;
  type: string;
  param?: string | null;
  code?: string | null;
}

const ERROR_TYPES: Record<number, string> = { 429: 'requests', 500: 'server_error', 503: 'server_error' };

/** An HTTP error answer in OpenAI's shape: `{error: {message, type, param, code}}`. */
export function openAIErrorBody(
  status: number,
  message: string,
  param: string | null = null,
  code: string | null = null,
) {
  return { error: { message, type: ERROR_TYPES[status] ?? 'invalid_request_error', param, code } };
}

export const openAIError = (status: number, message: string, param: string | null = null, code: string | null = null) =>
  new HttpError(status, openAIErrorBody(status, message, param, code));

/**
 * One page of an OpenAI list endpoint over `ordered` (in the order the endpoint lists): `limit`
 * (from 1 to `maxLimit`, else the API's 400), the cursor `after` (an id; one that is not listed
 * gives an empty page), and the envelope `{object, data, first_id, last_id, has_more}`.
 */
export function cursorPage<T extends { id: string }>(
  ordered: readonly T[],
  query: Record<string, string>,
  limits: { defaultLimit: number; maxLimit: number },
  view: (item: T) => unknown,
) {
  const limit = query.limit === undefined ? limits.defaultLimit : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > limits.maxLimit) {
    const expected = `an integer from 1 to ${limits.maxLimit} expected, got ${query.limit}.`;
    throw openAIError(400, `Invalid 'limit': ${expected}`, 'limit');
  }
  const start = query.after === undefined ? 0 : ordered.findIndex((item) => item.id === query.after) + 1;
  const rest = query.after !== undefined && start === 0 ? [] : ordered.slice(start);
  const page = rest.slice(0, limit);
  return {
    object: 'list',
    data: page.map(view),
    first_id: page[0]?.id ?? null,
    last_id: page.at(-1)?.id ?? null,
    has_more: rest.length > limit,
  };
}

/** What a test can choose for one request (by custom_id); the default is `succeeded`. */
export type OpenAIOutcome =
  | { type: 'succeeded'; body?: Record<string, unknown> }
  | { type: 'errored'; status_code?: number; error: RequestError };

/** One entry of a failed batch's `errors.data`. */
export interface BatchError {
  code: string;
  line: number | null;
  message: string;
  param: string | null;
}

export interface ResultLine {
  custom_id: string;
  /** `stopped`: never ran (the batch expired or was cancelled first); not counted as failed. */
  kind: 'succeeded' | 'failed' | 'stopped';
  /** The line as written to the output or error file (serialised once, when the request ran). */
  text: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
}

const DUPLICATE =
  'The custom_id for this request is a duplicate of another request. The custom_id parameter must be unique for each request in a batch.';

/** Checks an input file as the real API does while `validating`; any error fails the whole batch. */
export function validateInput(text: string, maxRequests: number): { lines: InputLine[]; errors: BatchError[] } {
  const raw = jsonlLines(text).filter((line) => line.trim() !== '');
  const errors: BatchError[] = [];
  const fail = (code: string, line: number | null, message: string, param: string | null = null) =>
    errors.push({ code, line, message, param });
  if (raw.length === 0) fail('empty_file', null, 'The batch input file is empty.');
  if (raw.length > maxRequests) {
    fail('too_many_tasks', null, `The batch input file has ${raw.length} requests; the limit is ${maxRequests}.`);
  }
  const lines: InputLine[] = [];
  const seen = new Set<string>();
  let model: unknown;
  raw.forEach((text, i) => {
    const n = i + 1;
    let line: Partial<InputLine>;
    try {
      line = JSON.parse(text);
    } catch {
      fail('invalid_json_line', n, 'This line is not parseable as valid JSON.');
      return;
    }
    for (const key of ['custom_id', 'method', 'url', 'body'] as const) {
      if (line[key] === undefined) fail('missing_required_parameter', n, `Missing required parameter: '${key}'.`, key);
    }
    if (line.custom_id !== undefined && seen.has(line.custom_id))
      fail('duplicate_custom_id', n, DUPLICATE, 'custom_id');
    if (line.custom_id !== undefined) seen.add(line.custom_id);
    if (line.method !== undefined && line.method !== 'POST') {
      fail('invalid_method', n, 'The method for this request must be POST.', 'method');
    }
    if (line.url !== undefined && line.url !== CHAT_COMPLETIONS) {
      fail('url_mismatch', n, `The URL of this request does not match the batch endpoint ${CHAT_COMPLETIONS}.`, 'url');
    }
    if (line.body !== undefined) {
      const lineModel = line.body.model;
      model ??= lineModel;
      if (typeof lineModel !== 'string') {
        fail('missing_required_parameter', n, "Missing required parameter: 'body.model'.", 'body.model');
      } else if (lineModel !== model) {
        fail(
          'model_mismatch',
          n,
          'The model of this request differs from the other requests in the file.',
          'body.model',
        );
      }
    }
    lines.push(line as InputLine);
  });
  return { lines, errors };
}

/**
 * Chat completions does not take these (Messages-API fields an untranslated body would carry); a
 * line that sets them fails with a 400 in the error file.
 */
const NOT_CHAT_PARAMS = ['top_k', 'stop_sequences', 'system', 'max_output_tokens', 'thinking', 'output_config'];

/** Why chat completions would refuse this body (undefined: it is fine). */
function bodyProblem(body: Record<string, unknown>): RequestError | undefined {
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    const message = "Missing required parameter: 'messages'.";
    return { message, type: 'invalid_request_error', param: 'messages', code: 'missing_required_parameter' };
  }
  const unknown = NOT_CHAT_PARAMS.find((name) => name in body);
  if (unknown) return { message: `Unrecognized request argument supplied: ${unknown}`, type: 'invalid_request_error' };
  return undefined;
}

/** The output line (success) or error-file line (failure) of a request that ran. */
export function resultLine(line: InputLine, outcome: OpenAIOutcome): ResultLine {
  const id = randomId('batch_req_', 32, 'hex');
  const requestId = randomId('', 32, 'hex');
  const problem = outcome.type === 'errored' ? outcome.error : bodyProblem(line.body);
  if (problem) {
    const status = outcome.type === 'errored' ? (outcome.status_code ?? 400) : 400;
    const response = {
      status_code: status,
      request_id: requestId,
      body: { error: { param: null, code: null, ...problem } },
    };
    return {
      custom_id: line.custom_id,
      kind: 'failed',
      text: JSON.stringify({ id, custom_id: line.custom_id, response, error: null }),
    };
  }
  const body = { ...chatCompletion(line.body), ...(outcome.type === 'succeeded' ? outcome.body : undefined) };
  const usage = body.usage as { prompt_tokens: number; completion_tokens: number };
  const response = { status_code: 200, request_id: requestId, body };
  return {
    custom_id: line.custom_id,
    kind: 'succeeded',
    usage,
    text: JSON.stringify({ id, custom_id: line.custom_id, response, error: null }),
  };
}

/** The error-file line of a request that never ran because the batch expired or was cancelled. */
export function stoppedLine(line: InputLine, why: 'expired' | 'cancelled'): ResultLine {
  const error =
    why === 'expired'
      ? { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' }
      : { code: 'batch_cancelled', message: 'This request was cancelled before it could be executed.' };
  const json = { id: randomId('batch_req_', 32, 'hex'), custom_id: line.custom_id, response: null, error };
  return { custom_id: line.custom_id, kind: 'stopped', text: JSON.stringify(json) };
}

/**
 * The function a request forces (`tool_choice` `required`: the first tool; `{type: "function"}`:
 * that one), which the real API then calls instead of answering in text.
 */
function forcedFunction(body: Record<string, unknown>): string | undefined {
  const tools = body.tools as { function: { name: string } }[] | undefined;
  const choice = body.tool_choice as string | { function: { name: string } } | undefined;
  if (choice === 'required') return tools?.[0]?.function.name;
  return typeof choice === 'object' ? choice.function.name : undefined;
}

/**
 * A realistic chat completion: the emulator's reply, cut at max_completion_tokens, with usage; a
 * forced function is called with `{}` as its arguments, with `finish_reason: "tool_calls"`.
 */
export function chatCompletion(body: Record<string, unknown>): Record<string, unknown> {
  const limit = (body.max_completion_tokens ?? body.max_tokens ?? REPLY_WORDS.length) as number;
  const forced = forcedFunction(body);
  const words = forced === undefined ? REPLY_WORDS.slice(0, limit) : [];
  const promptTokens = estimateTokens(body.messages);
  const message =
    forced === undefined
      ? { role: 'assistant', content: words.join(' '), refusal: null, annotations: [] }
      : {
          role: 'assistant',
          content: null,
          refusal: null,
          annotations: [],
          tool_calls: [{ id: randomId('call_', 24), type: 'function', function: { name: forced, arguments: '{}' } }],
        };
  const finish = forced !== undefined ? 'tool_calls' : words.length < REPLY_WORDS.length ? 'length' : 'stop';
  return {
    id: randomId('chatcmpl-', 29),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [
      {
        index: 0,
        message,
        logprobs: null,
        finish_reason: finish,
      },
    ],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: words.length,
      total_tokens: promptTokens + words.length,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_emulator',
    ...EXTRA_FIELD,
  };
}
