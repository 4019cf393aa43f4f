/** Helpers of the operation tests: a result's value, an expected refusal, the dependencies, a fresh project. */
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/domain/clock.js';
import { createProject } from '../../src/operations/create-project.js';
import type { OperationDeps, OperationErrorCode, Result } from '../../src/operations/operation.js';
import type { Database } from '../../src/store/database.js';

/** The operation's value; fails the test with the refusal otherwise. */
export function value<T>(result: Result<T>): T {
  if (!result.ok) assert.fail(`expected success, got ${result.error.code}: ${result.error.message}`);
  return result.value;
}

/** Asserts a refusal with this code (and a message matching `message`); returns the error. */
export function refused<T>(result: Result<T>, code: OperationErrorCode, message?: RegExp) {
  assert.equal(result.ok, false, `expected ${code}, got success: ${JSON.stringify(result)}`);
  if (result.ok) throw new Error('unreachable');
  assert.equal(result.error.code, code, result.error.message);
  if (message) assert.match(result.error.message, message);
  return result.error;
}

export function depsOf(
  database: Database,
  clock = new ManualClock(Date.UTC(2026, 0, 1)),
): OperationDeps & {
  clock: ManualClock;
  config: { secretKey: Buffer | null };
} {
  return { database, clock, config: { secretKey: null } };
}

let counter = 0;
export const uniqueSlug = (stem: string) => `${stem}-${process.pid}-${++counter}`;

/** A fresh project, made by the operation. */
export async function newProject(deps: OperationDeps & { config?: { secretKey: Buffer | null } }, stem = 'ops') {
  return value(await createProject({ config: { secretKey: null }, ...deps }, { slug: uniqueSlug(stem) }));
}
