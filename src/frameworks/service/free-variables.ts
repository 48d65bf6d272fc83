/**
 * Free-variable analysis of a function's source (seed 002 §3.2, first phase): which names the
 * function reads from outside itself, which of those it assigns, and whether it uses `this`,
 * `arguments` or direct `eval` at its top level. acorn parses; acorn-walk visits every node type;
 * the scope rules (var hoisting, block scopes, parameters, class and catch bindings) are here.
 */
import type { Node } from 'acorn';
import type { RecursiveVisitors } from 'acorn-walk';
import { acorn, acornWalk } from './service-dependencies.js';

export interface FreeVariables {
  /** Free names, each with the offset (in the function source) of its first use. */
  free: Map<string, number>;
  /** Free names the function assigns (`x = …`, `x++`): a captured binding cannot be written back. */
  assigned: Map<string, number>;
  /** How the source has to be wrapped to be an expression: as is, or as a method of an object literal. */
  form: 'expression' | 'method';
  /** Offset of a top-level `this` in an arrow function (it would be the capturing scope's `this`). */
  lexicalThis?: number;
  /**
   * How each free name is used: only as `name.key` with a static key (reads, writes, `delete`, never as a
   * method call's receiver) — the set of those keys — or in any other way (`'whole'`: passed, spread,
   * destructured, indexed with a computed key, called as `name.m()`).
   */
  members: Map<string, Set<string> | 'whole'>;
  /**
   * Free names written through (`name.a.b = …`, `name[k]++`, `delete name.a`): the first such write's
   * offset and the keys from the name to the written location (`*` for a computed key).
   */
  writesThrough: Map<string, { at: number; path: string[] }>;
  /** A class's private members (`#x`): name, static or not, field or method, offset. */
  privates: { name: string; isStatic: boolean; field: boolean; at: number }[];
  /** The function is strict whatever the code around it: a class, or a body starting with 'use strict'. */
  strict: boolean;
}

interface Scope {
  names: Set<string>;
  /** Function scopes take `var` declarations; block scopes do not. */
  fn: boolean;
  parent: Scope | undefined;
}

type AnyNode = Node & Record<string, unknown>;

const cache = new Map<string, FreeVariables>();

/** Analyses a function's source as `Function.prototype.toString` gives it (cached by source). */
export function freeVariables(source: string): FreeVariables {
  const hit = cache.get(source);
  if (hit) return hit;
  const result = analyse(source);
  if (cache.size > 10_000) cache.clear();
  cache.set(source, result);
  return result;
}

/** Parses the function source as an expression; a method (`m() {…}`, `get x() {…}`) is parsed inside an object literal. */
function parseFunction(source: string): { node: AnyNode; offset: number; form: FreeVariables['form'] } {
  try {
    const node = acorn().parseExpressionAt(`(${source})`, 0, { ecmaVersion: 'latest', preserveParens: true }) as unknown as AnyNode;
    if (node.end === source.length + 2) return { node: node as unknown as AnyNode, offset: 1, form: 'expression' };
  } catch {
    // not an expression: try a method below
  }
  const program = acorn().parse(`({${source}})`, { ecmaVersion: 'latest' }) as unknown as AnyNode;
  const expr = ((program.body as unknown as unknown as AnyNode[])[0]!.expression as unknown as AnyNode);
  const prop = (expr.properties as unknown as unknown as AnyNode[])[0]!;
  return { node: prop.value as unknown as AnyNode, offset: 2, form: 'method' };
}

function analyse(source: string): FreeVariables {
  const { node, offset, form } = parseFunction(source);
  const free = new Map<string, number>();
  const assigned = new Map<string, number>();
  const members = new Map<string, Set<string> | 'whole'>();
  const writesThrough = new Map<string, { at: number; path: string[] }>();
  const top = node.type === 'ParenthesizedExpression' ? (node.expression as unknown as AnyNode) : node;
  const isClass = top.type === 'ClassExpression' || top.type === 'ClassDeclaration';
  const result: FreeVariables = { free, assigned, form, members, writesThrough, privates: isClass ? privateMembers(top, offset) : [], strict: isClass || hasUseStrict(top) };
  const isArrow = top.type === 'ArrowFunctionExpression';
  const isFree = (name: string, scope: Scope): boolean => {
    for (let s: Scope | undefined = scope; s; s = s.parent) if (s.names.has(name)) return false;
    return true;
  };
  /** A use of `name`; `key` when it is `name.key` with a static key (any other use is of the whole value). */
  const use = (name: string, at: number, scope: Scope, write: boolean, key?: string) => {
    if (!isFree(name, scope)) return;
    if (!free.has(name)) free.set(name, at - offset);
    if (write && !assigned.has(name)) assigned.set(name, at - offset);
    const keys = members.get(name);
    if (key === undefined) members.set(name, 'whole');
    else if (keys === undefined) members.set(name, new Set([key]));
    else if (keys !== 'whole') keys.add(key);
  };
  /** `a.b[c].d = …`: a write through the free name `a`, at keys ['b', '*', 'd']. */
  const writeThrough = (target: AnyNode, scope: Scope) => {
    const path: string[] = [];
    let n = target;
    while (n.type === 'MemberExpression') {
      path.unshift(staticKey(n) ?? '*');
      n = n.object as unknown as AnyNode;
    }
    if (n.type !== 'Identifier' || path.length === 0) return;
    const name = n.name as string;
    if (isFree(name, scope) && !writesThrough.has(name)) writesThrough.set(name, { at: n.start - offset, path });
  };

  const declarePattern = (pattern: AnyNode | null | undefined, scope: Scope, visit: (n: AnyNode, s: Scope) => void) => {
    if (!pattern) return;
    switch (pattern.type) {
      case 'Identifier': scope.names.add(pattern.name as string); return;
      case 'ObjectPattern':
        for (const p of pattern.properties as unknown as unknown as AnyNode[]) {
          if (p.type === 'RestElement') declarePattern(p.argument as unknown as AnyNode, scope, visit);
          else {
            if (p.computed) visit(p.key as unknown as AnyNode, scope);
            declarePattern(p.value as unknown as AnyNode, scope, visit);
          }
        }
        return;
      case 'ArrayPattern': for (const e of pattern.elements as unknown as (AnyNode | null)[]) declarePattern(e, scope, visit); return;
      case 'RestElement': declarePattern(pattern.argument as unknown as AnyNode, scope, visit); return;
      case 'AssignmentPattern':
        declarePattern(pattern.left as unknown as AnyNode, scope, visit);
        visit(pattern.right as unknown as AnyNode, scope);
        return;
    }
  };

  const blockScope = (body: AnyNode[], scope: Scope, visit: (n: AnyNode, s: Scope) => void) => {
    const inner: Scope = { names: new Set(), fn: false, parent: scope };
    declareLexical(body, inner.names);
    for (const stmt of body) visit(stmt, inner);
  };

  let depth = 0; // function nesting: 0 = the analysed function itself
  const fnVisit = (n: AnyNode, scope: Scope, visit: (n: AnyNode, s: Scope) => void) => {
    const own: Scope = { names: new Set(), fn: true, parent: scope };
    if (n.type === 'FunctionExpression' && n.id) own.names.add((n.id as unknown as AnyNode).name as string);
    if (n.type !== 'ArrowFunctionExpression') own.names.add('arguments');
    for (const p of n.params as unknown as unknown as AnyNode[]) declarePattern(p, own, visit);
    const body = n.body as unknown as AnyNode;
    depth++;
    if (body.type === 'BlockStatement') {
      hoistVars(body, own.names);
      declareLexical(body.body as unknown as unknown as AnyNode[], own.names);
      for (const stmt of body.body as unknown as unknown as AnyNode[]) visit(stmt, own);
    } else visit(body, own);
    depth--;
  };

  const visitors: RecursiveVisitors<Scope> = {
    Function: (n, scope, c) => fnVisit(n as unknown as AnyNode, scope, c as never),
    Identifier: (n, scope) => use((n as unknown as AnyNode).name as string, n.start, scope, false),
    ThisExpression: (n) => { if (depth === 1 && isArrow && result.lexicalThis === undefined) result.lexicalThis = n.start - offset; },
    BlockStatement: (n, scope, c) => blockScope((n as unknown as AnyNode).body as unknown as unknown as AnyNode[], scope, c as never),
    StaticBlock: (n, scope, c) => blockScope((n as unknown as AnyNode).body as unknown as unknown as AnyNode[], scope, c as never),
    Program: (n, scope, c) => blockScope((n as unknown as AnyNode).body as unknown as unknown as AnyNode[], scope, c as never),
    VariableDeclaration: (n, scope, c) => {
      for (const d of (n as unknown as AnyNode).declarations as unknown as unknown as AnyNode[]) {
        declarePattern(d.id as unknown as AnyNode, { names: new Set(), fn: false, parent: scope }, c as never);
        if (d.init) c(d.init as Node, scope);
      }
    },
    FunctionDeclaration: (n, scope, c) => fnVisit(n as unknown as AnyNode, scope, c as never),
    ClassDeclaration: (n, scope, c) => classVisit(n as unknown as AnyNode, scope, c as never),
    ClassExpression: (n, scope, c) => classVisit(n as unknown as AnyNode, scope, c as never),
    CatchClause: (n, scope, c) => {
      const own: Scope = { names: new Set(), fn: false, parent: scope };
      declarePattern((n as unknown as AnyNode).param as unknown as AnyNode, own, c as never);
      c((n as unknown as AnyNode).body as Node, own);
    },
    ForStatement: (n, scope, c) => loopScope(n as unknown as AnyNode, scope, c as never, ['init', 'test', 'update', 'body']),
    ForInStatement: (n, scope, c) => loopScope(n as unknown as AnyNode, scope, c as never, ['left', 'right', 'body']),
    ForOfStatement: (n, scope, c) => loopScope(n as unknown as AnyNode, scope, c as never, ['left', 'right', 'body']),
    MemberExpression: (n, scope, c) => {
      const m = n as unknown as AnyNode;
      const object = m.object as unknown as AnyNode;
      if (object.type === 'Identifier') use(object.name as string, object.start, scope, false, staticKey(m));
      else c(object, scope);
      if (m.computed) c(m.property as Node, scope);
    },
    // `name.m()` and name.m`…` pass `name` as `this`: a use of the whole value.
    CallExpression: (n, scope, c) => {
      receiverUse((n as unknown as AnyNode).callee as unknown as AnyNode, scope);
      acornWalk().base.CallExpression!(n, scope, c);
    },
    TaggedTemplateExpression: (n, scope, c) => {
      receiverUse((n as unknown as AnyNode).tag as unknown as AnyNode, scope);
      acornWalk().base.TaggedTemplateExpression!(n, scope, c);
    },
    UnaryExpression: (n, scope, c) => {
      const u = n as unknown as AnyNode;
      if (u.operator === 'delete') writeThrough(u.argument as unknown as AnyNode, scope);
      c(u.argument as Node, scope);
    },
    Property: (n, scope, c) => {
      const p = n as unknown as AnyNode;
      if (p.computed) c(p.key as Node, scope);
      if (p.shorthand && (p.value as unknown as AnyNode).type === 'Identifier') use((p.key as unknown as AnyNode).name as string, (p.key as unknown as AnyNode).start, scope, false);
      else c(p.value as Node, scope);
    },
    MethodDefinition: (n, scope, c) => { const m = n as unknown as AnyNode; if (m.computed) c(m.key as Node, scope); c(m.value as Node, scope); },
    PropertyDefinition: (n, scope, c) => { const m = n as unknown as AnyNode; if (m.computed) c(m.key as Node, scope); if (m.value) { depth++; c(m.value as Node, scope); depth--; } },
    LabeledStatement: (n, scope, c) => c((n as unknown as AnyNode).body as Node, scope),
    BreakStatement: () => undefined,
    ContinueStatement: () => undefined,
    MetaProperty: () => undefined,
    AssignmentExpression: (n, scope, c) => {
      const a = n as unknown as AnyNode;
      assignTarget(a.left as unknown as AnyNode, scope, c as never);
      c(a.right as Node, scope);
    },
    UpdateExpression: (n, scope, c) => assignTarget((n as unknown as AnyNode).argument as unknown as AnyNode, scope, c as never),
  };

  const receiverUse = (callee: AnyNode, scope: Scope) => {
    let m = callee;
    while (m.type === 'ChainExpression' || m.type === 'ParenthesizedExpression') m = m.expression as unknown as AnyNode;
    const object = m.type === 'MemberExpression' ? (m.object as unknown as AnyNode) : undefined;
    if (object?.type === 'Identifier') use(object.name as string, object.start, scope, false);
  };

  const assignTarget = (target: AnyNode, scope: Scope, c: (n: AnyNode, s: Scope) => void) => {
    if (target.type === 'MemberExpression') writeThrough(target, scope);
    if (target.type === 'Identifier') use(target.name as string, target.start, scope, true);
    else if (target.type === 'ObjectPattern' || target.type === 'ArrayPattern') {
      const names = new Set<string>();
      collectNames(target, names);
      for (const name of names) use(name, target.start, scope, true);
      acornWalk().base[target.type]!(target as never, scope, c as never);
    } else c(target, scope);
  };

  const classVisit = (n: AnyNode, scope: Scope, c: (n: AnyNode, s: Scope) => void) => {
    const own: Scope = { names: new Set(), fn: false, parent: scope };
    if (n.id) own.names.add((n.id as unknown as AnyNode).name as string);
    if (n.superClass) c(n.superClass as unknown as AnyNode, scope);
    for (const member of (n.body as unknown as AnyNode).body as unknown as unknown as AnyNode[]) c(member, own);
  };

  const loopScope = (n: AnyNode, scope: Scope, c: (n: AnyNode, s: Scope) => void, keys: string[]) => {
    const own: Scope = { names: new Set(), fn: false, parent: scope };
    const head = (n.init ?? n.left) as unknown as unknown as AnyNode | null;
    if (head && head.type === 'VariableDeclaration' && head.kind !== 'var') for (const d of head.declarations as unknown as unknown as AnyNode[]) collectNames(d.id as unknown as AnyNode, own.names);
    for (const key of keys) {
      const child = n[key] as unknown as unknown as AnyNode | null;
      if (!child) continue;
      if ((key === 'left') && child.type !== 'VariableDeclaration') assignTarget(child, own, c);
      else c(child, own);
    }
  };

  const root: Scope = { names: new Set(), fn: true, parent: undefined };
  acornWalk().recursive(top, root, visitors);
  return result;
}

/** The key of `a.b` or `a['b']`; undefined when computed from an expression. */
function staticKey(m: AnyNode): string | undefined {
  const p = m.property as unknown as AnyNode;
  if (!m.computed) return p.type === 'Identifier' ? (p.name as string) : undefined; // a.#x is not a property
  return p.type === 'Literal' && (typeof p.value === 'string' || typeof p.value === 'number') ? String(p.value) : undefined;
}

/** The private members (`#x`) a class declares. */
function privateMembers(cls: AnyNode, offset: number): FreeVariables['privates'] {
  const out: FreeVariables['privates'] = [];
  for (const m of (cls.body as unknown as AnyNode).body as unknown as AnyNode[]) {
    const key = m.key as unknown as AnyNode | undefined;
    if (key?.type !== 'PrivateIdentifier') continue;
    out.push({ name: `#${key.name as string}`, isStatic: m.static === true, field: m.type === 'PropertyDefinition', at: key.start - offset });
  }
  return out;
}

/** Whether a function's body starts with a 'use strict' directive. */
function hasUseStrict(fn: AnyNode): boolean {
  const body = fn.body as unknown as AnyNode | undefined;
  if (body?.type !== 'BlockStatement') return false;
  for (const stmt of body.body as unknown as AnyNode[]) {
    const directive = stmt.directive as string | undefined;
    if (directive === undefined) return false;
    if (directive === 'use strict') return true;
  }
  return false;
}

/** let/const/class/function declarations directly in a block belong to the block. */
function declareLexical(body: AnyNode[], into: Set<string>): void {
  for (const stmt of body) {
    if (stmt.type === 'VariableDeclaration' && stmt.kind !== 'var') for (const d of stmt.declarations as unknown as unknown as AnyNode[]) collectNames(d.id as unknown as AnyNode, into);
    if (stmt.type === 'FunctionDeclaration' || stmt.type === 'ClassDeclaration') into.add((stmt.id as unknown as AnyNode).name as string);
  }
}

/** `var` declarations anywhere in a function body (not in nested functions) belong to the function. */
function hoistVars(n: unknown, into: Set<string>): void {
  if (!n || typeof n !== 'object') return;
  if (Array.isArray(n)) { for (const c of n) hoistVars(c, into); return; }
  const node = n as unknown as AnyNode;
  if (typeof node.type !== 'string') return;
  if (/Function|Class/.test(node.type)) return;
  if (node.type === 'VariableDeclaration' && node.kind === 'var') for (const d of node.declarations as unknown as unknown as AnyNode[]) collectNames(d.id as unknown as AnyNode, into);
  for (const key of Object.keys(node)) if (key !== 'type' && typeof node[key] === 'object') hoistVars(node[key], into);
}

/** The names a binding pattern declares. */
function collectNames(pattern: AnyNode | null | undefined, into: Set<string>): void {
  if (!pattern) return;
  switch (pattern.type) {
    case 'Identifier': into.add(pattern.name as string); return;
    case 'ObjectPattern': for (const p of pattern.properties as unknown as unknown as AnyNode[]) collectNames((p.type === 'RestElement' ? p.argument : p.value) as unknown as AnyNode, into); return;
    case 'ArrayPattern': for (const e of pattern.elements as unknown as (AnyNode | null)[]) collectNames(e, into); return;
    case 'RestElement': collectNames(pattern.argument as unknown as AnyNode, into); return;
    case 'AssignmentPattern': collectNames(pattern.left as unknown as AnyNode, into); return;
  }
}
