/** A project's OpenAI file as the routes answer it: found (404 otherwise) and shaped. */
import type { FastifyRequest } from 'fastify';
import { authOf } from '../../http/auth.js';
import { type CompatFileRow, findCompatFile } from '../../store/compat/files.js';
import type { CompatDeps } from '../deps.js';
import { compatErrors } from '../error-shapes.js';
import { isCompatId } from '../ids.js';
import { fileObjectOf } from './objects.js';

export async function findFile(deps: CompatDeps, request: FastifyRequest, id: string): Promise<CompatFileRow> {
  const row = isCompatId('file', id)
    ? await findCompatFile(deps.database, { projectId: authOf(request).projectId, id })
    : undefined;
  if (!row) throw compatErrors.fileNotFound(id);
  return row;
}

export function fileView(row: CompatFileRow) {
  return fileObjectOf({
    id: row.id,
    bytes: Number(row.bytes),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    filename: row.filename,
    purpose: row.purpose,
  });
}
