import type { CoordClient, CreateMode, Op, OpResult } from './types.js';

/** Fluent builder over `CoordClient.multi`, mirroring ZooKeeper's transaction API. */
export class Transaction {
  private readonly ops: Op[] = [];

  constructor(private readonly client: CoordClient) {}

  create(path: string, data?: Uint8Array, mode?: CreateMode): this {
    this.ops.push({ op: 'create', path, ...(data ? { data } : {}), ...(mode ? { mode } : {}) });
    return this;
  }

  delete(path: string, version = -1): this {
    this.ops.push({ op: 'delete', path, version });
    return this;
  }

  setData(path: string, data: Uint8Array, version = -1): this {
    this.ops.push({ op: 'setData', path, data, version });
    return this;
  }

  check(path: string, version: number): this {
    this.ops.push({ op: 'check', path, version });
    return this;
  }

  get size(): number {
    return this.ops.length;
  }

  commit(): Promise<OpResult[]> {
    return this.client.multi(this.ops);
  }
}
