/**
 * Writes an OpenAI file into the database as its bytes come (an upload, a batch's output file):
 * chunks of 1 MiB under a lease, so a 200 MB file is never held whole, and the file is
 * visible only once finished. A crash leaves an unfinished file to the sweeper.
 */
import type { Clock } from '../../domain/clock.js';
import {
  appendCompatFileChunk,
  beginCompatFile,
  deleteCompatFile,
  finishCompatUpload,
} from '../../store/compat/files.js';
import type { Database } from '../../store/database.js';
import type { CompatFilesTable } from '../../store/schema.js';

/**
 * Bytes a stored chunk holds (the last one less): each is one transaction, one fsync per MiB.
 * Larger chunks left more behind for the garbage collector: reading a 40 MB output file in 4 MiB
 * chunks raised the service's peak by 20-40 MB (bench:compat), in 1 MiB chunks by 0-20.
 */
export const CHUNK_BYTES = 1024 * 1024;

/** Files are kept this long after they are made (OpenAI's default for batch files). */
export const FILE_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export interface FileWriterDeps {
  database: Database;
  clock: Clock;
  /** How long the file's lease runs without a chunk written. */
  leaseMs: number;
}

export class CompatFileWriter {
  /**
   * The chunk being filled, reused for the next once written. Its memory is shared: on a SQLite
   * file the write thread reads it in place, so a chunk written leaves no copy in either thread for
   * the garbage collector (the copies it left were tens of MB at a batch's end).
   */
  private chunk: Buffer | null = null;
  private held = 0;
  private seq = 0;
  private begun = false;
  private total = 0;

  constructor(
    private readonly deps: FileWriterDeps,
    readonly file: { id: string; projectId: string; purpose: CompatFilesTable['purpose']; filename: string },
  ) {}

  /** Bytes written so far. */
  get bytes(): number {
    return this.total;
  }

  async write(data: Buffer): Promise<void> {
    if (data.length === 0) return;
    await this.begin();
    this.chunk ??= Buffer.from(new SharedArrayBuffer(CHUNK_BYTES));
    this.total += data.length;
    for (let at = 0; at < data.length; ) {
      const copied = data.copy(this.chunk, this.held, at);
      this.held += copied;
      at += copied;
      if (this.held === CHUNK_BYTES) await this.flush();
    }
  }

  /**
   * Writes what is held, leaving the file invisible: whoever makes it ready (a batch's end) does
   * so in its own transaction. Resolves to the file's size.
   */
  async flushAll(): Promise<number> {
    await this.begin();
    await this.flush();
    return this.total;
  }

  /** Makes an upload visible, counted against the project's bytes of the day and held. */
  async finishUpload(): Promise<void> {
    await this.flushAll();
    await finishCompatUpload(this.deps.database, {
      fileId: this.file.id,
      projectId: this.file.projectId,
      bytes: this.total,
      now: this.deps.clock.now(),
    });
  }

  /** Deletes what was written (best effort: the sweeper deletes an unfinished file once its lease lapses). */
  async abandon(): Promise<void> {
    if (this.begun) await deleteCompatFile(this.deps.database, this.file.id).catch(() => {});
  }

  private async begin(): Promise<void> {
    if (this.begun) return;
    this.begun = true;
    const now = this.deps.clock.now();
    await beginCompatFile(this.deps.database, {
      id: this.file.id,
      project_id: this.file.projectId,
      purpose: this.file.purpose,
      filename: this.file.filename,
      created_at: now,
      expires_at: now + FILE_RETENTION_MS,
      locked_until: now + this.deps.leaseMs,
    });
  }

  /** Writes the chunk; it is filled again only once the write resolved. */
  private async flush(): Promise<void> {
    if (this.held === 0 || this.chunk === null) return;
    const data = this.chunk.subarray(0, this.held);
    this.held = 0;
    await appendCompatFileChunk(this.deps.database, {
      fileId: this.file.id,
      seq: this.seq++,
      data,
      lockedUntil: this.deps.clock.now() + this.deps.leaseMs,
    });
  }
}
