/**
 * Reading many rows a page at a time. A read on the main SQLite connection is synchronous: one
 * query for a 100,000-cargo batch holds the event loop (and the API with it) for the whole read.
 * A page is a bounded read, and a turn of the event loop comes between two pages.
 */
import { nextTurn } from '../turns.js';

/**
 * The rows `page(after, size)` reads (at most `size` rows with an id after `after`, in id order),
 * page by page from the first, as one stream.
 */
export async function* pagesById<R extends { id: string }>(
  size: number,
  page: (after: string, size: number) => Promise<R[]>,
): AsyncGenerator<R> {
  let after = '';
  for (;;) {
    const rows = await page(after, size);
    yield* rows;
    if (rows.length < size) return;
    after = (rows[rows.length - 1] as R).id;
    await nextTurn();
  }
}
