/**
 * Test support: a coordination client that loses the connection once, on the first request whose path
 * matches — what a ZooKeeper leader election does to a request in flight.
 */
import { CoordError } from '../../src/coord/errors.js';
import type { CoordClient } from '../../src/coord/types.js';

/** `client`, except that its first request on a path `lost.at` matches loses the connection. */
export function losingOnce(client: CoordClient, lost: { at: RegExp; count: number }): CoordClient {
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || !['create', 'getData', 'getChildren', 'exists', 'setData', 'multi'].includes(String(prop))) return value;
      return (path: unknown, ...rest: unknown[]) => {
        if (typeof path === 'string' && lost.at.test(path) && lost.count++ === 0) return Promise.reject(new CoordError('CONNECTION_LOSS', path));
        return (value as (...a: unknown[]) => unknown).call(target, path, ...rest);
      };
    },
  });
}
