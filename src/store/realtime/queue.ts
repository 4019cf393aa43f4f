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
import { claimRealtimeRequests } from './claim.js';
import { settleRealtimeRequests } from './settle.js';

export function realtimeQueue(database: Database): RealtimeQueue {
  return {
    enqueue: (input) => enqueueRealtimeRequests(database, input),
    claim: (input) => claimRealtimeRequests(database, input),
    settle: (workerId, settlements, now) => settleRealtimeRequests(database, workerId, settlements, now),
    nextDueAt: (endpoint) => nextRealtimeDueAt(database, endpoint),
    progress: (batchId) => realtimeBatchProgress(database, batchId),
    results: (batchId) => realtimeBatchResults(database, batchId),
    cancel: (batchId, now) => cancelRealtimeRequests(database, batchId, now),
    remove: (batchId) => removeRealtimeRequests(database, batchId),
  };
}
