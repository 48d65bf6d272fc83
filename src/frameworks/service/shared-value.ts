/**
 * A value shared with `distribution.put` (Ray's `put`, Dask's `scatter`): captured once as its own
 * segment (data only), uploaded once per connection, and named by the SHA-256 of its segment. A task
 * that captures it reads `shared.value`; every batch refers to it by hash. It is a snapshot: what the
 * program changes in `value` after `put` is not seen by tasks, and tasks may only read it (a task
 * that writes to it fails with a SharedValueWriteError).
 */
import type { ContentBlob } from './content-blobs.js';

export class SharedValue<T> {
  /** @internal */
  constructor(
    /** The program's own value (what `put` was given). */
    readonly value: T,
    /** The segment's blob (its hash names the value) and the blobs of its bulk data. */
    readonly segment: ContentBlob,
    readonly blobs: readonly ContentBlob[],
  ) {}

  get hash(): string {
    return this.segment.hash;
  }

  /** Bytes uploaded for it: the segment and its bulk data. */
  get bytes(): number {
    return this.blobs.reduce((n, b) => n + b.bytes.length, this.segment.bytes.length);
  }
}
