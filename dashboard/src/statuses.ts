/** Cargo statuses in their lifecycle's order, with the words the dashboard shows (a missing one is a type error). */
import type { CargoStatus } from './types.js';

export const CARGO_STATUS_LABELS: Record<CargoStatus, string> = {
  pending: 'pending',
  batched: 'batched',
  processing: 'processing',
  completed: 'completed',
  failed: 'failed',
  callback_pending: 'delivering',
  callback_delivered: 'delivered',
  callback_failed: 'delivery failed',
  canceled: 'canceled',
};

export const CARGO_STATUSES = Object.keys(CARGO_STATUS_LABELS) as CargoStatus[];

export type Tone = 'neutral' | 'info' | 'success' | 'warning' | 'danger';

export const CARGO_STATUS_TONES: Record<CargoStatus, Tone> = {
  pending: 'neutral',
  batched: 'info',
  processing: 'info',
  completed: 'success',
  failed: 'danger',
  callback_pending: 'info',
  callback_delivered: 'success',
  callback_failed: 'danger',
  canceled: 'neutral',
};
