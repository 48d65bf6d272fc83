/**
 * A job kind with nothing but a member that holds nothing: the tests submit jobs of it to check what
 * submission does for any kind (no `prepare`: its spec is stored as submitted).
 */
import { defineJobKind } from '../../../src/runtime/kinds/job-kind.js';

export default defineJobKind({
  name: 'plain',
  member: () => ({ drain: () => Promise.resolve(), stop: () => undefined }),
});
