/**
 * The npm packages only the service needs (optional peer dependencies of tidepool-runtime), loaded
 * where they are used: an application that never uses the service does not install them. (The
 * packages a service offers to tasks are another thing: service-packages.ts.)
 */
import type * as Acorn from 'acorn';
import type * as AcornWalk from 'acorn-walk';
import type * as Esbuild from 'esbuild';
import type fastifyFactory from 'fastify';
import { requireOptional, resolveOptional } from '../../util/optional-package.js';

export const SERVICE_PART = 'task parallelism as a service (Distribution, tidepool serve)';

/** acorn parses captured closures (free-variables.ts). */
export const acorn = () => requireOptional<typeof Acorn>('acorn', SERVICE_PART);
/** acorn-walk visits their syntax trees. */
export const acornWalk = () => requireOptional<typeof AcornWalk>('acorn-walk', SERVICE_PART);
/** esbuild bundles the sandbox runtime and the packages tasks import. */
export const esbuild = () => requireOptional<typeof Esbuild>('esbuild', SERVICE_PART);
/** fastify serves the service's HTTPS endpoint. */
export const fastify = () => requireOptional<typeof fastifyFactory>('fastify', SERVICE_PART);

/** Fails here, naming the package, when isolated-vm is missing: it is loaded only in the sandbox's child processes. */
export function checkSandboxPackage(): void {
  resolveOptional('isolated-vm', SERVICE_PART);
}
