/**
 * barge → OpenAI: the Batch and File objects (decisions.md, "Provider-compatible batch endpoints";
 * providers.md §3.1, §3.3). Times are Unix seconds. Pure.
 */
import type { CompatBatchState } from '../../domain/lifecycle.js';
import type { LineProblem } from './chat-request.js';

/** An entry of a failed batch's `errors.data`: its line is 1-based, null for the file as a whole. */
export interface BatchError extends LineProblem {
  line: number | null;
}

export interface BatchFacts {
  id: string;
  state: Exclude<CompatBatchState, 'creating'>;
  inputFileId: string;
  createdAt: number;
  inProgressAt: number | null;
  cancelRequestedAt: number | null;
  endedAt: number | null;
  failedAt: number | null;
  counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
  errors: BatchError[] | null;
  outputFileId: string | null;
  errorFileId: string | null;
}

export const COMPLETION_WINDOW = '24h';
const WINDOW_S = 24 * 60 * 60;

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

/**
 * The Batch: `in_progress` (or `cancelling` once a cancel was asked) while a request is
 * unfinished, `completed` (or `cancelled`) when every one is and the files are made, `failed` when
 * its lines were refused.
 */
export function batchObjectOf(batch: BatchFacts, endpoint: string) {
  const canceled = batch.cancelRequestedAt !== null;
  const status: 'in_progress' | 'cancelling' | 'cancelled' | 'completed' | 'failed' =
    batch.state === 'failed'
      ? 'failed'
      : batch.state === 'ended'
        ? canceled
          ? 'cancelled'
          : 'completed'
        : canceled
          ? 'cancelling'
          : 'in_progress';
  return {
    id: batch.id,
    object: 'batch' as const,
    endpoint,
    input_file_id: batch.inputFileId,
    completion_window: COMPLETION_WINDOW,
    status,
    output_file_id: batch.outputFileId,
    error_file_id: batch.errorFileId,
    created_at: seconds(batch.createdAt) as number,
    in_progress_at: seconds(batch.inProgressAt),
    completed_at: batch.state === 'ended' && !canceled ? seconds(batch.endedAt) : null,
    cancelled_at: batch.state === 'ended' && canceled ? seconds(batch.endedAt) : null,
    failed_at: seconds(batch.failedAt),
    expires_at: (seconds(batch.createdAt) as number) + WINDOW_S,
    request_counts: batch.counts,
    metadata: batch.metadata,
    errors: batch.errors === null ? null : { object: 'list' as const, data: batch.errors },
  };
}

export interface FileFacts {
  id: string;
  bytes: number;
  createdAt: number;
  expiresAt: number;
  filename: string;
  purpose: 'batch' | 'batch_output';
}

export function fileObjectOf(file: FileFacts) {
  return {
    id: file.id,
    object: 'file' as const,
    bytes: file.bytes,
    created_at: seconds(file.createdAt) as number,
    expires_at: seconds(file.expiresAt) as number,
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed' as const,
  };
}
