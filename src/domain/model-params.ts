/**
 * Submit-time checks of a request's parameters against the model it is routed to: `max_tokens`
 * within the catalog's `max_output_tokens`, and no parameter the provider or the model refuses.
 * The provider would refuse these only when the batch ends, hours later (decisions.md); here they
 * are a 400 naming the parameter.
 */
import { LIMITS } from './cargo-request.js';
import type { FieldError } from './errors.js';
import { OPTIONAL_MODEL_PARAMS } from './model-catalog.js';
import type { ModelRoute } from './model-routing.js';
import type { ModelSettings } from './request-surface.js';

/** OpenAI's `stop` takes at most 4 sequences. */
const OPENAI_MAX_STOP_SEQUENCES = 4;

export function checkModelParams(input: {
  /** `params.model` as submitted, for the messages. */
  model: string;
  route: ModelRoute;
  params: ModelSettings;
  records?: { modelInput: ModelSettings }[];
}): FieldError[] {
  const { model, route } = input;
  const problems: FieldError[] = [];
  // What a provider refuses for every model is its route's (route-parts.ts); these are the model's own.
  const refused = new Set(route.entry?.unsupportedParams ?? []);
  const check = (settings: ModelSettings, at: string) => {
    for (const param of OPTIONAL_MODEL_PARAMS) {
      if (settings[param] !== undefined && refused.has(param)) {
        problems.push({ path: `${at}/${param}`, message: `is not accepted: '${model}' does not take ${param}` });
      }
    }
    const stops = settings.stop_sequences;
    if (route.provider === 'openai' && Array.isArray(stops) && stops.length > OPENAI_MAX_STOP_SEQUENCES) {
      problems.push({
        path: `${at}/stop_sequences`,
        message: `has ${stops.length} entries; openai models take at most ${OPENAI_MAX_STOP_SEQUENCES}`,
      });
    }
    const limit = route.entry?.maxOutputTokens;
    if (limit != null && settings.max_tokens !== undefined && settings.max_tokens > limit) {
      problems.push({
        path: `${at}/max_tokens`,
        message: `is ${settings.max_tokens}, above the ${limit} output tokens '${model}' can produce`,
      });
    }
  };
  check(input.params, '/params');
  input.records?.forEach((record, i) => {
    check(record.modelInput, `/records/${i}/modelInput`);
  });
  // A request that gives no max_tokens gets the default, which a small model may not reach.
  const limit = route.entry?.maxOutputTokens;
  const usesDefault =
    input.params.max_tokens === undefined &&
    (input.records === undefined || input.records.some((r) => r.modelInput.max_tokens === undefined));
  if (limit != null && usesDefault && LIMITS.defaultMaxTokens > limit) {
    problems.push({
      path: '/params/max_tokens',
      message: `is not given and defaults to ${LIMITS.defaultMaxTokens}, above the ${limit} output tokens '${model}' can produce`,
    });
  }
  return problems;
}
