/** Schema-validation errors (Ajv's) as `{path, message}` problems that name the field. Pure. */
import type { FieldError } from './errors.js';

export interface AjvError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/**
 * Turns schema-validation errors into `{path, message}` pairs that name the field, in time linear
 * in their number (a body of many wrong items has as many errors).
 */
export function fieldErrors(validation: AjvError[]): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of withUnionsResolved(validation)) {
    let path = e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      path = `${path}/${String(e.params.missingProperty)}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      path = `${path}/${String(e.params.additionalProperty)}`;
      message = 'is not a known field';
    } else if ((e.keyword === 'minLength' || e.keyword === 'minItems') && e.params.limit === 1) {
      message = 'must not be empty';
    } else if (e.keyword === 'const') {
      message = `must be ${JSON.stringify(e.params.allowedValue)}`;
    } else if (e.keyword === 'enum') {
      message = `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (e.keyword === 'discriminator') {
      // A union told apart by a tag (`callback.type`): the tag is missing or names no shape.
      path = `${path}/${String(e.params.tag)}`;
      message = e.params.error === 'tag' ? 'is required and must be a string' : 'is not one of the accepted types';
    }
    const key = `${path}\u0000${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ path, message });
    }
  }
  return out;
}

/**
 * A value that matches no branch of a union (`content`: a string or an array of blocks) reports
 * every branch, then the union's "must match a schema in anyOf". What it is told is the rule it
 * broke: the errors of the first branch of its own type (an empty string, 1,001 blocks), or, when
 * it has none of their types, which types those are. Ajv reports a union's branches just before
 * its verdict, so they are the errors collected last.
 */
function withUnionsResolved(validation: AjvError[]): AjvError[] {
  const out: AjvError[] = [];
  for (const e of validation) {
    if (e.keyword !== 'anyOf') {
      out.push(e);
      continue;
    }
    const prefix = `${e.schemaPath}/`;
    const inUnion = (x: AjvError) =>
      x.schemaPath.startsWith(prefix) &&
      (x.instancePath === e.instancePath || x.instancePath.startsWith(`${e.instancePath}/`));
    let start = out.length;
    while (start > 0 && inUnion(out[start - 1] as AjvError)) start--;
    const reported = out.splice(start);
    const branchOf = (x: AjvError) => x.schemaPath.slice(prefix.length).split('/', 1)[0];
    const wrongTypes = reported.filter((x) => x.keyword === 'type' && x.instancePath === e.instancePath);
    const otherType = new Set(wrongTypes.map(branchOf));
    const own = reported.find((x) => !otherType.has(branchOf(x)));
    if (own) out.push(...reported.filter((x) => branchOf(x) === branchOf(own)));
    else out.push({ ...e, message: `must be ${wrongTypes.flatMap((x) => x.params.type).join(' or ')}` });
  }
  return out;
}
