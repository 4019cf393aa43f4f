/**
 * The smallest instance of a JSON schema, for svc-mock's forced tool inputs and JSON answers
 * (decisions.md, "The full request surface"): required properties only, the first `enum` value,
 * the first branch of `anyOf`/`oneOf`, and the smallest values that meet the constraints (empty
 * strings and arrays unless a minimum says otherwise, 0 or the lower bound for numbers, false).
 *
 * Deterministic and bounded: at most MAX_VALUES values and MAX_DEPTH levels, whatever the schema
 * (a `$ref` cycle or a huge `minItems` cannot make it run away). Not covered, since they cannot be
 * met in general without a search: `pattern`, `not`, `if`/`then`/`else`, `dependentSchemas`, and
 * `uniqueItems` beyond numbering the items.
 */

/** Values generated for one instance at most, characters of its strings, and the nesting followed. */
const MAX_VALUES = 10_000;
const MAX_CHARS = 1_000_000;
const MAX_DEPTH = 32;

interface Budget {
  values: number;
  chars: number;
}

/** A fixed valid value per common `format`. */
const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': '1970-01-01T00:00:00Z',
  date: '1970-01-01',
  time: '00:00:00Z',
  duration: 'P0D',
  email: 'a@example.com',
  hostname: 'example.com',
  ipv4: '127.0.0.1',
  ipv6: '::1',
  uri: 'https://example.com',
  url: 'https://example.com',
  uuid: '00000000-0000-0000-0000-000000000000',
};

type Schema = Record<string, unknown>;

export function schemaInstance(schema: unknown): unknown {
  const budget: Budget = { values: MAX_VALUES, chars: MAX_CHARS };
  return instanceOf(schema, isObject(schema) ? schema : {}, 0, 0, budget);
}

/** `variant` numbers an array's items, so `uniqueItems` arrays get distinct scalars. */
function instanceOf(schema: unknown, root: Schema, depth: number, variant: number, budget: Budget): unknown {
  budget.values--;
  if (!isObject(schema) || depth > MAX_DEPTH || budget.values < 0) return null;
  const next = (sub: unknown, v = 0) => instanceOf(sub, root, depth + 1, v, budget);
  if (typeof schema.$ref === 'string') return next(resolveRef(root, schema.$ref), variant);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const branches of [schema.anyOf, schema.oneOf]) {
    if (Array.isArray(branches) && branches.length > 0)
      return next({ ...withoutKeys(schema), ...branches[0] }, variant);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    return next(
      schema.allOf.reduce((merged: Schema, part) => mergeSchemas(merged, part), withoutKeys(schema)),
      variant,
    );
  }
  switch (typeOf(schema)) {
    case 'object':
      return objectInstance(schema, next);
    case 'array':
      return arrayInstance(schema, next, budget);
    case 'string':
      return stringInstance(schema, variant, budget);
    case 'integer':
      return numberInstance(schema, true, variant);
    case 'number':
      return numberInstance(schema, false, variant);
    case 'boolean':
      return variant % 2 === 1;
    default:
      return null;
  }
}

/** The schema's type: the first of a list that is not "null" (or "null" alone), else what its keywords imply. */
function typeOf(schema: Schema): string {
  const { type } = schema;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return (type.find((t) => t !== 'null') ?? type[0] ?? 'null') as string;
  if (isObject(schema.properties) || Array.isArray(schema.required)) return 'object';
  if ('items' in schema || 'prefixItems' in schema) return 'array';
  if ('minLength' in schema || 'format' in schema) return 'string';
  if ('minimum' in schema || 'maximum' in schema || 'multipleOf' in schema) return 'number';
  return 'null';
}

function objectInstance(schema: Schema, next: (sub: unknown) => unknown): Record<string, unknown> {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const names = Array.isArray(schema.required) ? schema.required.filter((n) => typeof n === 'string') : [];
  // Optional properties only as far as minProperties asks.
  const wanted = Math.min(count(schema.minProperties), Object.keys(properties).length);
  for (const name of Object.keys(properties)) {
    if (names.length >= wanted) break;
    if (!names.includes(name)) names.push(name);
  }
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const sub = Object.hasOwn(properties, name)
      ? properties[name]
      : isObject(schema.additionalProperties)
        ? schema.additionalProperties
        : {};
    // defineProperty: a property named __proto__ stays a property.
    Object.defineProperty(out, name, { value: next(sub), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function arrayInstance(schema: Schema, next: (sub: unknown, variant?: number) => unknown, budget: Budget): unknown[] {
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
  const length = Math.min(count(schema.minItems), Math.max(budget.values, 0));
  const items = isObject(schema.items) ? schema.items : {};
  return Array.from({ length }, (_, i) => next(i < prefix.length ? prefix[i] : items, i));
}

function stringInstance(schema: Schema, variant: number, budget: Budget): string {
  const format = typeof schema.format === 'string' ? FORMAT_EXAMPLES[schema.format] : undefined;
  if (format !== undefined) return format;
  const length = Math.min(count(schema.minLength), Math.max(budget.chars, 0));
  budget.chars -= length;
  const base = 'a'.repeat(length);
  return variant === 0 ? base : `${base}${variant}`;
}

function numberInstance(schema: Schema, integer: boolean, variant: number): number {
  const num = (key: string) => (typeof schema[key] === 'number' ? (schema[key] as number) : undefined);
  const step = (num('multipleOf') ?? 0) > 0 ? (num('multipleOf') as number) : integer ? 1 : 0;
  const lower = bound(num('minimum'), num('exclusiveMinimum'), Math.max);
  const upper = bound(num('maximum'), num('exclusiveMaximum'), Math.min);
  const fits = (v: number) =>
    (lower === null || v > lower.at || (!lower.exclusive && v === lower.at)) &&
    (upper === null || v < upper.at || (!upper.exclusive && v === upper.at));
  // The value nearest 0 that the bounds allow: 0 itself, else the lowest above the lower bound,
  // else the highest below the upper one (a multiple of the step where there is one).
  let value = 0;
  if (!fits(0) && lower !== null && lower.at >= 0) value = nearest(lower, 1, step, upper);
  else if (!fits(0) && upper !== null) value = nearest(upper, -1, step, lower);
  // Distinct items of a uniqueItems array, while the bounds allow.
  const varied = round(value + variant * (step > 0 ? step : 1));
  return variant > 0 && fits(varied) ? varied : value;
}

interface Bound {
  at: number;
  exclusive: boolean;
}

/** The tighter of an inclusive and an exclusive bound (`pick`: Math.max for lower bounds, Math.min for upper). */
function bound(inclusive: number | undefined, exclusive: number | undefined, pick: typeof Math.max): Bound | null {
  if (inclusive === undefined && exclusive === undefined) return null;
  if (exclusive === undefined) return { at: inclusive as number, exclusive: false };
  if (inclusive === undefined) return { at: exclusive, exclusive: true };
  const at = pick(inclusive, exclusive);
  return { at, exclusive: at === exclusive && at !== inclusive };
}

/** The first value from bound `b` inwards (`direction` 1 up, -1 down): the next multiple of `step`, or the bound itself. */
function nearest(b: Bound, direction: 1 | -1, step: number, other: Bound | null): number {
  if (step > 0) {
    let k = direction > 0 ? Math.ceil(b.at / step) : Math.floor(b.at / step);
    if (b.exclusive && k * step === b.at) k += direction;
    return round(k * step);
  }
  if (!b.exclusive) return b.at;
  // A real number strictly inside: halfway to the other bound, or one past this one.
  return other === null ? b.at + direction : (b.at + other.at) / 2;
}

/** Multiples of a decimal step without binary noise (0.1 × 3 is 0.3, not 0.30000000000000004). */
function round(value: number): number {
  return Number(value.toPrecision(12));
}

/** A local `$ref` (`#`, `#/$defs/x`, `#/definitions/x`, any JSON pointer into the schema); others resolve to {}. */
function resolveRef(root: Schema, ref: string): unknown {
  if (!ref.startsWith('#')) return {};
  let at: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (!isObject(at) || !Object.hasOwn(at, key)) return {};
    at = at[key];
  }
  return at;
}

/** allOf: properties and required lists merged, other keywords the later part's. */
function mergeSchemas(a: Schema, b: unknown): Schema {
  if (!isObject(b)) return a;
  const merged: Schema = { ...a, ...b };
  if (isObject(a.properties) || isObject(b.properties)) {
    merged.properties = {
      ...(isObject(a.properties) ? a.properties : {}),
      ...(isObject(b.properties) ? b.properties : {}),
    };
  }
  if (Array.isArray(a.required) || Array.isArray(b.required)) {
    const required = [
      ...(Array.isArray(a.required) ? a.required : []),
      ...(Array.isArray(b.required) ? b.required : []),
    ];
    merged.required = [...new Set(required)];
  }
  return merged;
}

function withoutKeys(schema: Schema): Schema {
  const { anyOf: _a, oneOf: _o, allOf: _l, ...rest } = schema;
  return rest;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.ceil(value) : 0;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
