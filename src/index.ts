/**
 * tidepool: an elastic task-parallel runtime for TypeScript on Node.js.
 * The coordination layer (ZooKeeper or the embedded backend) and its recipes are the foundation.
 */
export * from './coord/index.js';
export { setLogLevel, setLogFormat, type LogLevel } from './util/log.js';
