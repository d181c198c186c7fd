// failmem for Node: the component, transpiled by `npm run build` into
// ./generated, behind a small idiomatic API (see wrap.mjs).
//
//   import { Session, classify, FailmemError } from './failmem.mjs';
//   using session = Session.create({ breakerThreshold: 5 });
//   const report = session.observe({ tool: 'bash', args: { command: 'make' },
//                                    output: 'make: *** [all] Error 2', exitCode: 2 });

import * as bindings from './generated/failmem.js';
import { wrap } from './wrap.mjs';

export { FailmemError, ERROR_CASES, symbolDispose } from './wrap.mjs';

const api = wrap(bindings);

/** Classifies one tool outcome with the built-in rules. */
export const classify = api.classify;
/** The built-in rule table, in precedence order. */
export const rules = api.rules;
/** One agent session's failure memory. */
export const Session = api.Session;
