/**
 * Model policy (decisions.md, "Model policy and spend budgets"): which models a project may submit.
 * - A provider-qualified name or Bedrock ARN the catalog does not list is "unlisted": accepted only
 *   while the deployment allows unlisted models (BARGE_ALLOW_UNLISTED_MODELS).
 * - A project's allowlist is a list of globs (`*` any run of characters, `?` one character)
 *   matched against the catalog id, or the whole qualified name of an unlisted model; null: all.
 */
import type { ModelRoute } from './model-routing.js';

/** The name a model is known by to the allowlist: its catalog id, or the name as given when unlisted. */
export function policyName(model: string, route: ModelRoute): string {
  return route.entry?.id ?? model;
}

/** A model the catalog does not list (svc-mock is always listed: it is the deployment's own). */
export function isUnlisted(route: ModelRoute): boolean {
  return route.entry === null && route.provider !== 'mock';
}

export function unlistedMessage(model: string): string {
  return `'${model}' is not in this deployment's catalog (GET /models lists the models served here)`;
}

/** An allowlist glob: 1 to 256 characters of model names, `*` and `?`. */
const PATTERN = /^[A-Za-z0-9._:@/*?-]{1,256}$/;

/** Why a pattern cannot be one, or null when it can. */
export function modelPatternProblem(pattern: string): string | null {
  return PATTERN.test(pattern) ? null : 'use model ids with * and ? as wildcards';
}

const compiled = new WeakMap<readonly string[], (name: string) => boolean>();
const everyModel = () => true;

/**
 * The allowlist as a test. Compiled once per list: the key cache holds one list object per
 * project while it is valid, so submits reuse the compiled test.
 */
export function allowlistOf(patterns: readonly string[] | null): (name: string) => boolean {
  if (patterns === null) return everyModel;
  let test = compiled.get(patterns);
  if (!test) {
    test = compileAllowlist(patterns);
    compiled.set(patterns, test);
  }
  return test;
}

function compileAllowlist(patterns: readonly string[]): (name: string) => boolean {
  const regexes = patterns.map(
    (p) =>
      new RegExp(
        `^${p
          .replace(/[.+^${}()|[\]\\]/g, '\\$&')
          .replace(/\*/g, '.*')
          .replace(/\?/g, '.')}$`,
      ),
  );
  return (name) => regexes.some((r) => r.test(name));
}
