/**
 * Request validation whose cost is bounded by the body, not by how many of its parts are wrong.
 * Every body is first checked by a validator that stops at the first problem (linear, and fast on
 * valid bodies); only an invalid body of at most FULL_REPORT_MAX_BYTES is checked again to name
 * every problem (at most about 128,000 of them, which errors.ts then reports the first few dozen
 * of). A larger invalid body reports its first problem: collecting all of a 10 MiB body's five
 * million took seconds and over a gigabyte.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';

export const FULL_REPORT_MAX_BYTES = 256 * 1024;

/** Ajv's options for every schema of the app (Fastify's `ajv.customOptions`). */
export const AJV_OPTIONS = Object.freeze({
  // Reject what does not match instead of silently dropping or converting it.
  removeAdditional: false,
  coerceTypes: false,
  useDefaults: true,
  // Every problem is reported, within a bound (see below).
  allErrors: true,
  // `callback` is a union told apart by `type`: errors then name the fields of that shape.
  discriminator: true,
});

const LARGE = Symbol('barge.largeBody');

/** Marks a parsed body whose text was larger than FULL_REPORT_MAX_BYTES (a property no validator sees). */
export function markLargeBody(value: unknown, textLength: number): void {
  if (textLength > FULL_REPORT_MAX_BYTES && value !== null && typeof value === 'object') {
    Object.defineProperty(value, LARGE, { value: true });
  }
}

export type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };
type BuildValidator = ReturnType<typeof AjvCompiler>;

/** Fastify's `schemaController.compilersFactory.buildValidator`: two Ajv compilers, as above. */
export function boundedValidatorFactory(): BuildValidator {
  const firstProblem = AjvCompiler();
  const everyProblem = AjvCompiler();
  const factory = (externalSchemas: Parameters<BuildValidator>[0], options: Parameters<BuildValidator>[1]) => {
    const withAllErrors = (allErrors: boolean) =>
      ({ ...options, customOptions: { ...options?.customOptions, allErrors } }) as Parameters<BuildValidator>[1];
    const fast = firstProblem(externalSchemas, withAllErrors(false));
    const full = everyProblem(externalSchemas, withAllErrors(true));
    // Fastify calls the compiler with the route's definition ({schema, method, url, httpPart}).
    return (route: unknown) => {
      const check = (fast as unknown as (r: unknown) => Validate)(route);
      // Compiled at the first invalid body: the request surface's schema takes a few hundred
      // milliseconds to compile, which every start would pay for bodies that are mostly valid.
      let report: Validate | undefined;
      const validate: Validate = (data) => {
        if (check(data)) {
          validate.errors = null;
          return true;
        }
        const large = data !== null && typeof data === 'object' && LARGE in data;
        if (large) {
          validate.errors = check.errors;
          return false;
        }
        report ??= (full as unknown as (r: unknown) => Validate)(route);
        validate.errors = report(data) ? check.errors : report.errors;
        return false;
      };
      return validate;
    };
  };
  return factory as unknown as BuildValidator;
}

/**
 * A validator of `schema` compiled as the app compiles a route's body schema (the same options,
 * the same bound on reported problems), for bodies a route reads itself: each request of a
 * provider-compatible batch is checked as POST /cargo/load checks its body.
 */
export function compileBodyValidator(schema: object): Validate {
  const compile = boundedValidatorFactory()({}, { customOptions: { ...AJV_OPTIONS } } as never) as unknown as (
    route: unknown,
  ) => Validate;
  return compile({ schema, httpPart: 'body', method: 'POST', url: '/' });
}

/**
 * compileBodyValidator, compiled when first used: the request surface's schema takes about half a
 * second to compile, which a process that never sees a batch should not pay at start.
 */
export function lazyBodyValidator(schema: object): Validate {
  let compiled: Validate | null = null;
  const validate: Validate = (data) => {
    compiled ??= compileBodyValidator(schema);
    const valid = compiled(data);
    validate.errors = compiled.errors ?? null;
    return valid;
  };
  return validate;
}
