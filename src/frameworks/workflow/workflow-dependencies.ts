/**
 * The npm packages only the workflow readers need (optional peer dependencies of tidepool-runtime),
 * loaded where they are used: an application that builds its workflows in code does not install them.
 */
import type AjvModule from 'ajv';
import type * as Saxes from 'saxes';
import { requireOptional } from '../../util/optional-package.js';

const READERS = 'reading Pegasus DAX and WfCommons workflow files (loadWorkflow, tidepool workflow)';

/** saxes reads Pegasus DAX XML as a stream of events with line numbers. */
export const saxes = () => requireOptional<typeof Saxes>('saxes', READERS);
/** ajv validates WfCommons files against the WfFormat schema (CommonJS: the constructor is the module itself). */
export const ajv = () => requireOptional<typeof AjvModule.default>('ajv', READERS);
