// The conformance runner of tests/README.md, shared by the Node test
// (test/conformance.test.mjs) and the browser page (window.runVectors).
// No imports beyond canonical.mjs: the caller supplies the vector files
// (already parsed) and the wrapped API (wrap.mjs).

import {
  configFromCanonical,
  errorToCanonical,
  firstDifference,
  outcomeFromCanonical,
  stringify,
  toCanonical,
  valueAt,
} from './canonical.mjs';

/**
 * @typedef {object} VectorFile
 * @property {string} path relative to tests/vectors/, with `/` separators
 * @property {any[]} cases the parsed file: an array of cases
 *
 * @typedef {object} CaseFailure
 * @property {string} case `<path>#<index>`
 * @property {string} description
 * @property {number} step the step index, -1 for creation
 * @property {string} message what differed, naming the first differing key
 *
 * @typedef {object} SuiteResult
 * @property {string[]} lines transcript lines, without newlines
 * @property {CaseFailure[]} failures the first failure of each failing case
 * @property {number} cases cases run
 * @property {number} passed cases that passed
 * @property {number} steps steps run
 */

/**
 * Suite order: path order, compared component by component (so `a/x.json`
 * sorts before `a-b/x.json`, as Rust's `Path` and Python's `PurePath` do).
 * @param {string} a
 * @param {string} b
 */
export function comparePaths(a, b) {
  const pa = a.split('/');
  const pb = b.split('/');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] !== pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  return pa.length - pb.length;
}

/** Renders a canonical value for a failure message, shortened. */
function show(value) {
  const text = value === undefined ? '(absent)' : stringify(value);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/** The ops whose call can fail. */
const FALLIBLE = new Set(['resolve', 'render', 'restore']);

/**
 * Runs one step; returns {result} (canonical value) or {error} (canonical
 * error value), and the session later steps use.
 */
function runStep(api, session, step) {
  const ok = (result, next = session) => ({ result, session: next });
  const attempt = (fn) => {
    try {
      return fn();
    } catch (err) {
      return { error: errorToCanonical(err), session };
    }
  };
  switch (step.op) {
    case 'observe':
      return ok(toCanonical(session.observe(outcomeFromCanonical(step.outcome)), 'step-report'));
    case 'classify':
      return ok(toCanonical(api.classify(outcomeFromCanonical(step.outcome)), 'classification'));
    case 'turn':
      return ok(session.turn());
    case 'compacted':
      return ok(session.compacted());
    case 'resolve':
      return attempt(() => (session.resolve(step.id), ok(null)));
    case 'failures':
      return ok(toCanonical(session.failures(), 'list:failure-record'));
    case 'patterns':
      return ok(toCanonical(session.patterns(), 'list:pattern'));
    case 'ledger':
      return ok(toCanonical(session.ledger(), 'ledger'));
    case 'stats':
      return ok(toCanonical(session.stats(), 'stats'));
    case 'render':
      return attempt(() => ok(session.render(step.template, { tokenBudget: step['token-budget'] ?? undefined })));
    case 'snapshot': {
      const text = session.snapshot();
      return attempt(() => {
        const restored = api.Session.restore(text);
        session.dispose();
        const again = restored.snapshot();
        if (again !== text) {
          return { ...ok(text, restored), problem: 'the restored session snapshots to different bytes' };
        }
        return ok(text, restored);
      });
    }
    case 'restore':
      return attempt(() => {
        const restored = api.Session.restore(step.snapshot);
        session.dispose();
        return ok(null, restored);
      });
    default:
      throw new TypeError(`unknown op ${JSON.stringify(step.op)}`);
  }
}

/**
 * Checks one step's outcome against its expectation; returns a message or null.
 */
function check(step, outcome) {
  if ('expect-error' in step) {
    if (!outcome.error) return `expected error "${step['expect-error']}", got result ${show(outcome.result)}`;
    if (outcome.error.error !== step['expect-error']) {
      return `$.error: expected "${step['expect-error']}", got "${outcome.error.error}" (${show(outcome.error.payload)})`;
    }
    return null;
  }
  if (outcome.error) return `unexpected error ${show(outcome.error)}`;
  for (const [key, partial] of [['expect', false], ['expect-partial', true]]) {
    if (!(key in step)) continue;
    const path = firstDifference(outcome.result, step[key], partial);
    if (path) {
      return `${path}: expected ${show(valueAt(step[key], path))}, got ${show(valueAt(outcome.result, path))} (${key})`;
    }
  }
  return null;
}

/**
 * Runs every case of every file, in the order given (sort with comparePaths).
 * @param {{classify: Function, Session: any}} api the wrapped API (wrap.mjs)
 * @param {VectorFile[]} files
 * @returns {SuiteResult}
 */
export function runSuite(api, files) {
  /** @type {SuiteResult} */
  const out = { lines: [], failures: [], cases: 0, passed: 0, steps: 0 };
  const line = (caseId, step, op, result) =>
    out.lines.push(`{"case":${stringify(caseId)},"step":${step},"op":${stringify(op)},"result":${stringify(result)}}`);

  for (const file of files) {
    if (!Array.isArray(file.cases)) throw new TypeError(`${file.path}: a vector file must be a JSON array of cases`);
    file.cases.forEach((testCase, index) => {
      const caseId = `${file.path}#${index}`;
      const description = testCase.description ?? '(no description)';
      out.cases += 1;
      /** @type {CaseFailure | null} */
      let failure = null;
      const fail = (step, message) => {
        failure ??= { case: caseId, description, step, message };
      };

      let session;
      try {
        session = api.Session.create(configFromCanonical(testCase.config ?? {}));
      } catch (err) {
        let error;
        try {
          error = errorToCanonical(err);
        } catch {
          error = { error: 'host', payload: String(err && err.message) };
        }
        const expected = testCase['expect-create-error'];
        if (expected === undefined) fail(-1, `create failed: ${show(error)}`);
        else if (expected !== error.error) fail(-1, `$.error: expected "${expected}", got "${error.error}"`);
        line(caseId, -1, 'create', expected === error.error ? null : error);
        if (failure) out.failures.push(failure);
        else out.passed += 1;
        return;
      }
      if ('expect-create-error' in testCase) {
        fail(-1, `expected create error "${testCase['expect-create-error']}", but the session was created`);
      }

      (testCase.steps ?? []).forEach((step, stepIndex) => {
        out.steps += 1;
        let outcome;
        // A failed call must leave the session as it was: compare snapshots
        // around the calls that can fail.
        const before = FALLIBLE.has(step.op) ? session.snapshot() : undefined;
        try {
          outcome = runStep(api, session, step);
          if (outcome.error && before !== undefined && outcome.session.snapshot() !== before) {
            outcome.problem = 'a failed call changed the session';
          }
        } catch (err) {
          // A host-side failure (bad vector, trap): record it and go on.
          outcome = { error: { error: 'host', payload: String(err && err.message) }, session };
        }
        session = outcome.session;
        line(caseId, stepIndex, step.op, outcome.error ?? outcome.result);
        const message = check(step, outcome) ?? outcome.problem;
        if (message) fail(stepIndex, `step ${stepIndex} (${step.op}): ${message}`);
      });
      try {
        session.dispose();
      } catch {
        // A trapped instance cannot drop its handles; nothing to free.
      }
      if (failure) out.failures.push(failure);
      else out.passed += 1;
    });
  }
  return out;
}

/**
 * A report of a suite's failures, one paragraph per failing case.
 * @param {SuiteResult} result
 */
export function formatFailures(result) {
  return result.failures.map((f) => `${f.case} "${f.description}"\n  ${f.message}`).join('\n');
}
