/**
 * Group commit: many concurrent submissions share one transaction and one fsync. Each `write`
 * resolves only after the transaction holding its row has committed, so a 200 still means durable,
 * while throughput grows with concurrency instead of being capped at one fsync per request.
 *
 * Up to `maxInFlight` groups commit at once (default 1). With one, rows that arrive while a group
 * commits wait for it and then go together, as soon as it ends; with more (PostgreSQL, whose
 * connections commit in parallel), the next group starts while the last is still in its round
 * trips to the server.
 */
export class GroupCommitWriter<Row> {
  private queue: { row: Row; bytes: number; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private queuedBytes = 0;
  private readonly flushing = new Set<Promise<void>>();
  /** Cancels the wait for the next flush, while one is scheduled. */
  private cancelWait: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly commit: (rows: Row[]) => Promise<void>,
    private readonly options: {
      intervalMs: number;
      maxRows: number;
      /** Groups committing at once, at most (default 1). */
      maxInFlight?: number;
      /** A group is also closed at this many bytes (rowBytes), so one commit stays a bounded size. */
      maxBytes?: number;
      rowBytes?: (row: Row) => number;
      /** Told after each committed group: its rows and how long the commit took. */
      onCommit?: (rows: number, seconds: number) => void;
      /**
       * After a group fails: the rows the database refuses, each with the error its write rejects
       * with. The others commit again as one group; without it (or when it names none), every row
       * of the group commits alone.
       */
      refusedRows?: (rows: Row[]) => Promise<Map<Row, Error>>;
    },
  ) {}

  write(row: Row): Promise<void> {
    if (this.closed) return Promise.reject(new Error('writer is closed'));
    return new Promise((resolve, reject) => {
      const bytes = this.options.rowBytes?.(row) ?? 0;
      this.queue.push({ row, bytes, resolve, reject });
      this.queuedBytes += bytes;
      this.schedule();
    });
  }

  private full(): boolean {
    return (
      this.queue.length >= this.options.maxRows ||
      (this.options.maxBytes !== undefined && this.queuedBytes >= this.options.maxBytes)
    );
  }

  /** The next group: at most maxRows rows and maxBytes bytes (one larger row goes alone). */
  private takeGroup(): typeof this.queue {
    let count = 0;
    let bytes = 0;
    const maxBytes = this.options.maxBytes ?? Number.POSITIVE_INFINITY;
    for (const item of this.queue) {
      if (count >= this.options.maxRows || (count > 0 && bytes + item.bytes > maxBytes)) break;
      count++;
      bytes += item.bytes;
    }
    this.queuedBytes -= bytes;
    return this.queue.splice(0, count);
  }

  /** Commits what is queued and refuses new rows. */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelWait?.();
    this.cancelWait = null;
    while (this.flushing.size > 0 || this.queue.length > 0) {
      await (this.queue.length > 0 && this.hasRoom() ? this.flush() : Promise.race(this.flushing));
    }
  }

  private hasRoom(): boolean {
    return this.flushing.size < (this.options.maxInFlight ?? 1);
  }

  /**
   * Rows that waited out a commit go as soon as this turn's events are handled; the first row after
   * a quiet spell waits `intervalMs`, so that the requests parsed with it join its group.
   */
  private schedule(afterCommit = false): void {
    if (this.cancelWait || this.queue.length === 0 || !this.hasRoom()) return;
    if (this.full()) {
      void this.flush();
      return;
    }
    const go = () => {
      this.cancelWait = null;
      void this.flush();
    };
    if (afterCommit) {
      const immediate = setImmediate(go);
      this.cancelWait = () => clearImmediate(immediate);
    } else {
      const timer = setTimeout(go, this.options.intervalMs);
      this.cancelWait = () => clearTimeout(timer);
    }
  }

  /** Commits the group in one transaction; on failure, `retry` decides what becomes of its rows. */
  private commitGroup(group: typeof this.queue, retry: (group: typeof this.queue) => Promise<void>): Promise<void> {
    const started = performance.now();
    return this.commit(group.map((w) => w.row)).then(
      () => {
        this.options.onCommit?.(group.length, (performance.now() - started) / 1000);
        for (const w of group) w.resolve();
      },
      () => retry(group),
    );
  }

  /**
   * One row the database refuses must not fail the others. The rows refusedRows names fail; the
   * rest commit again together, so a refused row costs its group one more transaction, not one
   * per row (a client that keeps reusing a key cannot make everyone's writes commit alone).
   */
  private async commitWithout(group: typeof this.queue): Promise<void> {
    const refused = await (this.options.refusedRows?.(group.map((w) => w.row)) ?? Promise.resolve(new Map()));
    if (refused.size === 0) return this.commitEach(group);
    const rest = group.filter((w) => !refused.has(w.row));
    if (rest.length > 0) await this.commitGroup(rest, (left) => this.commitEach(left));
    // After the rest: a row refused as a repeat of another in its group then finds that one stored.
    for (const w of group) {
      const error = refused.get(w.row);
      if (error) w.reject(error);
    }
  }

  private async commitEach(group: typeof this.queue): Promise<void> {
    for (const w of group) {
      await this.commit([w.row]).then(w.resolve, w.reject);
    }
  }

  private flush(): Promise<void> {
    const flushing = this.commitGroup(this.takeGroup(), (group) =>
      this.commitWithout(group).catch(() => this.commitEach(group)),
    );
    this.flushing.add(flushing);
    return flushing.finally(() => {
      this.flushing.delete(flushing);
      if (!this.closed) this.schedule(true);
    });
  }
}
