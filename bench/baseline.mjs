// The baseline: what users write instead of failmem. A failure tracker in the
// style of the common failure-evidence trackers (/work/shared/seeds/003_*):
// an outcome is a failure when the host says so (is_error, or a non-zero exit
// code); its category comes from a substring table of 11 categories; failures
// are kept (at most 50, repeats counted by tool + error prefix) and a
// "Previous Failures" block is rebuilt for the context. bench/baseline.py is
// the same code in Python. BENCHMARKS.md documents the table and the mapping.

/** [category, substrings], tried in this order on the lowercased output. */
export const TABLE = [
  ['permission', ['permission denied', 'access denied', 'eacces', 'unauthorized']],
  ['not_found', ['not found', 'no such file', 'enoent', 'does not exist', '404']],
  ['syntax', ['syntax error', 'unexpected token', 'parse error', 'invalid json']],
  ['type', ['type error', 'typeerror', 'is not a function', 'cannot read propert']],
  ['network', ['network', 'connection', 'econnrefused', 'socket', 'fetch failed']],
  ['timeout', ['timeout', 'timed out', 'etimedout']],
  ['validation', ['validation', 'invalid', 'required', 'must be']],
  ['logic', ['assertion', 'invariant', 'expect']],
  ['resource', ['out of memory', 'disk full', 'enomem', 'enospc', 'quota']],
  ['runtime', ['exception', 'traceback', 'panicked', 'error']],
];

/** The baseline's categories as failmem's category names. */
export const MAPPING = {
  permission: 'permission',
  not_found: 'not-found',
  syntax: 'syntax',
  type: 'type-error',
  network: 'network',
  timeout: 'timeout',
  validation: 'invalid-arguments',
  logic: 'test-failure',
  resource: 'resource',
  runtime: 'runtime',
  unknown: 'unknown',
};

/** The baseline category of an outcome, or 'none' when it is not a failure. */
export function categorize({ output = '', exitCode, isError }) {
  const failed = isError === true || (exitCode != null && exitCode !== 0);
  if (!failed) return 'none';
  const lower = output.toLowerCase();
  for (const [category, needles] of TABLE) {
    for (const n of needles) if (lower.includes(n)) return category;
  }
  return 'unknown';
}

/** The baseline's tracker: record, count repeats, build the context block. */
export class Tracker {
  constructor(maxFailures = 50) {
    this.maxFailures = maxFailures;
    this.failures = [];
    this.iteration = 0;
  }

  /** One step: classify, record a failure, return the context block. */
  step(outcome) {
    this.iteration++;
    const category = categorize(outcome);
    if (category !== 'none') {
      const error = (outcome.output || '').split('\n').find((l) => l.trim()) ?? '';
      const key = `${outcome.tool}:${error.slice(0, 100)}`;
      const repeatCount = this.failures.filter((f) => f.key === key).length + 1;
      this.failures.push({ key, action: outcome.tool, args: outcome.args, error: error.slice(0, 200), category, iteration: this.iteration, repeatCount, resolved: false });
      if (this.failures.length > this.maxFailures) this.failures.shift();
    }
    return this.context();
  }

  /** The "Previous Failures" block of the last 10 unresolved failures. */
  context() {
    const open = this.failures.filter((f) => !f.resolved).slice(-10);
    if (!open.length) return '';
    const lines = ['[Previous Failures - Learn from these to avoid repeating mistakes]', ''];
    for (const f of open) {
      lines.push(`**${f.action}** (${f.category}): ${f.error}`);
      lines.push(`  Args: ${typeof f.args === 'string' ? f.args.slice(0, 200) : JSON.stringify(f.args)}`);
    }
    return lines.join('\n');
  }
}
