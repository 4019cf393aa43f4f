/** The store side of real-time batches: the RealtimeQueue port (domain/realtime-requests.ts) over one database. */
import type { RealtimeQueue } from '../../domain/realtime-requests.js';
import type { Database } from '../database.js';
import {
  cancelRealtimeRequests,
  enqueueRealtimeRequests,
  nextRealtimeDueAt,
  realtimeBatchProgress,
  realtimeBatchResults,
  removeRealtimeRequests,
} from './batch-requests.js';
import { settleAndClaimRealtime } from './claim.js';

export function realtimeQueue(database: Database): RealtimeQueue {
  return {
    enqueue: (input) => enqueueRealtimeRequests(database, input),
    settleAndClaim: (input) => settleAndClaimRealtime(database, input),
    nextDueAt: (endpoint) => nextRealtimeDueAt(database, endpoint),
    progress: (batchId) => realtimeBatchProgress(database, batchId),
    results: (batchId) => realtimeBatchResults(database, batchId),
    cancel: (batchId, now) => cancelRealtimeRequests(database, batchId, now),
    remove: (batchId) => removeRealtimeRequests(database, batchId),
  };
}
