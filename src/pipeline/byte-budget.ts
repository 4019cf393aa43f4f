/**
 * Bounds how many bytes of batch data the steps of one process hold in memory at once. A
 * submission holds its whole request list while it is built and handed to the provider; a
 * collection holds what the provider returns while it streams it. With several batches claimed at
 * once (BARGE_WORKER_CONCURRENCY), each up to the provider's limit (hundreds of megabytes for some),
 * memory would otherwise follow the largest batches instead of a fixed bound. Work waits its turn
 * in arrival order; a batch larger than the whole budget runs alone.
 */
/** The default bound of each budget: one default-sized batch (10,000 requests of a few hundred bytes) fits. */
export const DEFAULT_BUDGET_BYTES = 16 * 1024 * 1024;

export class ByteBudget {
  private used = 0;
  private readonly waiting: { bytes: number; start: () => void }[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(bytes: number, work: () => Promise<T>): Promise<T> {
    await this.acquire(bytes);
    try {
      return await work();
    } finally {
      this.release(bytes);
    }
  }

  private acquire(bytes: number): Promise<void> {
    if (this.waiting.length === 0 && this.fits(bytes)) {
      this.used += bytes;
      return Promise.resolve();
    }
    return new Promise((start) => this.waiting.push({ bytes, start }));
  }

  private release(bytes: number): void {
    this.used -= bytes;
    for (let next = this.waiting[0]; next && this.fits(next.bytes); next = this.waiting[0]) {
      this.waiting.shift();
      this.used += next.bytes;
      next.start();
    }
  }

  private fits(bytes: number): boolean {
    return this.used === 0 || this.used + bytes <= this.limit;
  }
}

/**
 * One budget per provider, each of `limit` bytes: a provider whose calls hang holds its own budget,
 * never another's, so memory is bounded by the providers' count times the limit.
 */
export class ProviderBudgets {
  private readonly budgets = new Map<string, ByteBudget>();

  constructor(private readonly limit: number) {}

  of(provider: string): ByteBudget {
    let budget = this.budgets.get(provider);
    if (!budget) {
      budget = new ByteBudget(this.limit);
      this.budgets.set(provider, budget);
    }
    return budget;
  }
}
