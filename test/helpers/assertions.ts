/** Assertions on error answers: a 400 naming a field, the 400 body format, an exact `{detail}` body. */
import assert from 'node:assert/strict';

type Response = { status: number; body: any; text: string };

/** A 400 whose body is `{detail: string, errors: [{path, message}]}` and names `path` among the errors. */
export function assertInvalidField(res: Response, path: string): void {
  assert.equal(res.status, 400, `expected 400 naming ${path}, got ${res.status}: ${res.text}`);
  assertErrorList(res);
  assert.ok(
    res.body.errors.some((e: { path: string }) => e.path === path),
    `expected an error at ${path}, got ${JSON.stringify(res.body.errors)}`,
  );
}

/** The 400 body format of decisions.md: a string `detail` and a non-empty `errors` list of strings. */
export function assertErrorList(res: Response): void {
  assert.equal(typeof res.body?.detail, 'string', res.text);
  assert.ok(Array.isArray(res.body.errors) && res.body.errors.length > 0, res.text);
  for (const e of res.body.errors) {
    assert.deepEqual(Object.keys(e).sort(), ['message', 'path']);
    assert.equal(typeof e.path, 'string');
    assert.equal(typeof e.message, 'string');
    assert.ok(e.message.length > 0);
  }
}

/** An error status whose JSON body is exactly `{detail}`. */
export function assertDetail(res: Response & { headers?: Headers }, status: number, detail: unknown): void {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(res.body, { detail });
}
