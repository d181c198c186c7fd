// Trace replay as host-examples/REPLAY.md specifies it: parsing a JSON Lines
// trace and producing the human and --json output, byte for byte. Shared by
// replay.mjs (Node) and the browser page. No imports beyond canonical.mjs.

import { outcomeFromCanonical, stringify, toCanonical } from './canonical.mjs';

/**
 * @typedef {import('./generated/interfaces/failmem-core-types.js').ToolOutcome} ToolOutcome
 * @typedef {import('./generated/interfaces/failmem-core-tracker.js').StepReport} StepReport
 *
 * @typedef {object} TraceItem one meaningful trace line
 * @property {number} line 1-based line number in the trace
 * @property {'tool' | 'turn' | 'compaction'} type
 * @property {ToolOutcome} [outcome] for `tool` lines
 */

/** A malformed trace line. `message` is `line N: …`. */
export class TraceError extends Error {
  /** @param {number} line @param {string} reason */
  constructor(line, reason) {
    super(`line ${line}: ${reason}`);
    this.name = 'TraceError';
    this.line = line;
  }
}

const S32_MIN = -(2 ** 31);
const S32_MAX = 2 ** 31 - 1;

/**
 * Parses a trace. Blank lines and lines of other types are skipped; a
 * malformed line throws TraceError.
 * @param {string} text
 * @returns {TraceItem[]}
 */
export function parseTrace(text) {
  /** @type {TraceItem[]} */
  const items = [];
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  lines.forEach((raw, i) => {
    const line = i + 1;
    const src = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (src.trim() === '') return;
    let value;
    try {
      value = JSON.parse(src);
    } catch {
      throw new TraceError(line, 'expected a JSON object');
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new TraceError(line, 'expected a JSON object');
    }
    if (value.type === 'turn' || value.type === 'compaction') {
      items.push({ line, type: value.type });
      return;
    }
    if (value.type !== 'tool') return;
    const want = (field, ok, what) => {
      if (field in value && !ok(value[field])) {
        throw new TraceError(line, `"${field}" must be ${what}`);
      }
    };
    want('tool', (v) => typeof v === 'string', 'a string');
    want('output', (v) => typeof v === 'string', 'a string');
    want('is_error', (v) => v === null || typeof v === 'boolean', 'a boolean or null');
    want(
      'exit_code',
      (v) => v === null || (Number.isInteger(v) && v >= S32_MIN && v <= S32_MAX),
      'a 32-bit integer or null',
    );
    items.push({
      line,
      type: 'tool',
      outcome: outcomeFromCanonical({
        tool: value.tool,
        args: value.args,
        output: value.output,
        'exit-code': value.exit_code,
        'is-error': value.is_error,
      }),
    });
  });
  return items;
}

/** Number of characters (Unicode scalar values), as Rust's `format!` pads. */
function charCount(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}
const padEnd = (s, width) => s + ' '.repeat(Math.max(0, width - charCount(s)));
const padStart = (s, width) => ' '.repeat(Math.max(0, width - charCount(s))) + s;

/**
 * A rendered block as REPLAY.md draws it, or '' for an empty text.
 * @param {string} name
 * @param {string} text
 */
export function formatBlock(name, text) {
  if (text === '') return '';
  let out = `      ┌ ${name}\n`;
  for (const l of text.split('\n')) out += l === '' ? '      │\n' : `      │ ${l}\n`;
  return `${out}      └\n`;
}

/**
 * The step line: `{step:>4}  {tool:<16} {category:<18} {verdict:<8}  {description}`,
 * trailing spaces removed.
 * @param {StepReport} report
 * @param {string} tool
 */
export function formatStepLine(report, tool) {
  const category = report.classification.category ?? 'ok';
  const line = `${padStart(String(report.step), 4)}  ${padEnd(tool, 16)} ${padEnd(category, 18)} ${padEnd(
    report.verdict.action,
    8,
  )}  ${report.classification.description}`;
  return line.trimEnd();
}

/**
 * The --json object of one tool line, as compact JSON text.
 * @param {number} line
 * @param {string} tool
 * @param {StepReport} report
 */
export function formatJsonLine(line, tool, report) {
  const c = report.classification;
  const v = report.verdict;
  return stringify({
    line,
    step: report.step,
    turn: report.turn,
    tool,
    category: c.category ?? 'none',
    verdict: v.action,
    description: c.description,
    fingerprint: c.fingerprint,
    rule: c.rule,
    tracked: c.tracked,
    terminal: c.terminal,
    'failure-id': report.failureId ?? null,
    reason: v.reason,
    'can-continue': v.canContinue,
    sentinel: v.sentinel ?? null,
    events: toCanonical(report.events, 'list:event'),
  });
}

/**
 * What one trace item did, for hosts that show more than text.
 * @typedef {object} ReplayStep
 * @property {TraceItem} item
 * @property {StepReport} [report] for `tool`
 * @property {number} [turn] for `turn`: the new turn number
 * @property {number} [compactions] for `compaction`: how many there have been
 * @property {string} [ledgerBlock] for `compaction`: the compaction-ledger text rendered before it
 * @property {string} text the human output for this item
 * @property {string} json the --json output for this item ('' unless `tool`)
 */

/** Replays a trace on a session, one item at a time. */
export class Replayer {
  /**
   * @param {{observe: Function, turn: Function, compacted: Function, render: Function, stats: Function}} session
   *   a wrapped Session (wrap.mjs)
   */
  constructor(session) {
    this.session = session;
    /** The last recent-failures text printed. */
    this.lastRecent = '';
  }

  /** The recent-failures block if its text changed since the last one printed. */
  #recentFailures() {
    const text = this.session.render('recent-failures');
    if (text === this.lastRecent || text === '') return '';
    this.lastRecent = text;
    return formatBlock('recent-failures', text);
  }

  /**
   * @param {TraceItem} item
   * @returns {ReplayStep}
   */
  step(item) {
    const s = this.session;
    if (item.type === 'turn') {
      const turn = s.turn();
      return { item, turn, text: `── turn ${turn} ──\n`, json: '' };
    }
    if (item.type === 'compaction') {
      const ledgerBlock = s.render('compaction-ledger');
      const compactions = s.compacted();
      const text = `── compaction ${compactions} ──\n${formatBlock('compaction-ledger', ledgerBlock)}${this.#recentFailures()}`;
      return { item, compactions, ledgerBlock, text, json: '' };
    }
    const outcome = /** @type {ToolOutcome} */ (item.outcome);
    const report = s.observe(outcome);
    let text = `${formatStepLine(report, outcome.tool)}\n`;
    if (report.classification.category !== undefined && report.classification.category !== null) {
      text += formatBlock('recovery', s.render('recovery'));
    }
    const { action, reason, canContinue } = report.verdict;
    if (action === 'nudge' || action === 'stop') {
      const suffix = action === 'stop' && canContinue ? ' (can continue)' : '';
      text += `      ↳ ${action.toUpperCase()}: ${reason}${suffix}\n`;
      text += formatBlock('nudge', s.render('nudge'));
    }
    text += this.#recentFailures();
    return { item, report, text, json: `${formatJsonLine(item.line, outcome.tool, report)}\n` };
  }

  /** The closing `summary:` line, with its newline. */
  summary() {
    const st = this.session.stats();
    return (
      `summary: ${st.steps} steps, ${st.turns} turns, ${st.compactions} compactions, ` +
      `${st.failures} failures, ${st.tracked} tracked, ${st.resolved} resolved, ` +
      `${st.nudges} nudges, ${st.stops} stops\n`
    );
  }
}

/**
 * Replays a whole trace; returns the full stdout text.
 * @param {any} session a wrapped Session
 * @param {TraceItem[]} items
 * @param {{json?: boolean}} [options]
 */
export function replayTrace(session, items, { json = false } = {}) {
  const replayer = new Replayer(session);
  let out = '';
  for (const item of items) {
    const step = replayer.step(item);
    out += json ? step.json : step.text;
  }
  if (!json) out += replayer.summary();
  return out;
}
