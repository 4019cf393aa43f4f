/** The worker loop: runs a kind of work's step while there is work, sleeps until due or woken, outlives errors. */
import type { Clock } from './domain/clock.js';
import type { Logger, Metrics } from './ports.js';
import { isDatabaseUnavailable, OUTAGE_RETRY_MS } from './store/outage.js';

export interface StepOutcome {
  didWork: boolean;
  /** When the step should run again even if nothing wakes it. */
  nextAt: number | null;
}

export interface LoopSnapshot {
  name: string;
  state: Loop['state'];
  lastError: string | null;
  steps: number;
}

/**
 * One loop per kind of work (forming batches, advancing batches, deliveries, the outbox,
 * purging). A loop runs its step again at once while there is work, then sleeps until its next
 * due time, a wake-up (new cargo, a formed batch, a recorded retry), or `idleMaxMs` as a safety
 * net. Errors are logged and retried with capped backoff; the loop itself never dies.
 */
export class Loop {
  state: 'idle' | 'running' | 'sleeping' | 'stopped' = 'idle';
  lastError: unknown = null;
  private steps = 0;
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private done: Promise<void> | null = null;

  constructor(
    readonly name: string,
    private readonly step: () => Promise<StepOutcome>,
    private readonly deps: { clock: Clock; log: Logger; metrics: Metrics; idleMaxMs: number },
  ) {
    deps.metrics.zero('counter', 'barge_loop_errors_total', { loop: name });
    deps.metrics.zero('histogram', 'barge_loop_step_seconds', { loop: name });
  }

  start(): void {
    this.done ??= this.run();
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.state = 'stopped';
    this.wake();
    await this.done;
  }

  /** What the loop is doing, for metrics and an operator's view. */
  snapshot(): LoopSnapshot {
    const error = this.lastError;
    return {
      name: this.name,
      state: this.state,
      lastError: error === null ? null : error instanceof Error ? error.message : String(error),
      steps: this.steps,
    };
  }

  private async run(): Promise<void> {
    const { clock, log, metrics, idleMaxMs } = this.deps;
    let failures = 0;
    while (this.state !== 'stopped') {
      this.state = 'running';
      this.woken = false;
      let delay: number;
      const started = performance.now();
      try {
        const outcome = await this.step();
        this.steps++;
        failures = 0;
        this.lastError = null;
        metrics.observe('barge_loop_step_seconds', (performance.now() - started) / 1000, { loop: this.name });
        if (outcome.didWork) continue;
        delay = outcome.nextAt === null ? idleMaxMs : outcome.nextAt - clock.now();
      } catch (err) {
        this.lastError = err;
        metrics.count('barge_loop_errors_total', { loop: this.name });
        if (isDatabaseUnavailable(err)) {
          // The database is out of reach (a restart, a failover): the store reports the outage
          // once; each loop tries again every second without a word (lastError and the error
          // count show it), and resumes within a second of the database's return instead of
          // after a backoff grown through the outage.
          delay = OUTAGE_RETRY_MS;
        } else {
          failures++;
          log.error({ loop: this.name, err }, 'worker step failed');
          delay = Math.min(30_000, 250 * 2 ** Math.min(failures, 7));
        }
      }
      if (this.woken || (this.state as string) === 'stopped') continue;
      this.state = 'sleeping';
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, Math.min(delay, idleMaxMs)));
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = null;
    }
  }
}
